import type { Suite } from '../config/evalSuite.js';
import { ConfigError } from '../config/configFiles.js';
import { openRepository } from '../git/repository.js';
import { readSnapshot } from '../git/snapshots.js';
import type { EvalTask } from '../sessionFormat/evalRecords.js';

/**
 * The suite's tasks as an eval records them when it starts: each repository's top
 * folder, each ref resolved to the commit it names now. A resumed eval runs from the
 * same commits, whatever the branch has become since.
 */
export async function planTasks(suite: Suite): Promise<EvalTask[]> {
  return Promise.all(
    suite.tasks.map(async (task): Promise<EvalTask> => {
      const repository = await openRepository(task.repository);
      const commit = (await readSnapshot(repository, task.ref))?.commit;
      if (!commit) {
        throw new ConfigError(suite.file, `[[tasks]] "${task.name}": ref "${task.ref}" names no commit in ${repository.root}.`, {
          key: 'ref',
          task: task.name,
        });
      }
      return { name: task.name, prompt: task.prompt, repository: repository.root, ref: task.ref, commit, setup: task.setup, acceptance: task.acceptance };
    }),
  );
}
