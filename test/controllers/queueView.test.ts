import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { QueueController, MULTI_DIFF_COMMAND } from '../../src/extension/queue/queueController.js';
import { FakeEditor, folderAt, runnerClientFor } from '../support/fakeEditor.js';
import { queueSetup } from '../support/queueAgents.js';
import { git, removeTempDirs, writeFile } from '../support/testEnvironment.js';

/** The Queue view's controller in plain Node: the real CLI and scripted agents on a real repository, the editor stubbed. */
function queueViewFor() {
  const setup = queueSetup();
  const editor = new FakeEditor();
  let checklist: string | undefined;
  const queue = new QueueController({
    window: editor.window,
    commands: editor.commands,
    log: editor.log,
    runner: runnerClientFor(setup.env),
    pickChecklist: async () => checklist,
    fileUri: (filePath) => `file:${filePath}`,
    blobUri: (_root, commit, filePath) => `blob:${commit ?? 'none'}:${filePath}`,
  });
  const folder = folderAt(setup.repo);
  const tasks = async () => (await queue.list(folder))!.tasks;
  return { ...setup, editor, queue, folder, tasks, pickChecklist: (file: string) => (checklist = file) };
}

describe('the Queue view (plain Node, the real CLI, a stubbed editor)', function () {
  this.timeout(120_000);
  after(removeTempDirs);

  it('adds tasks from a prompt, the selection and a checklist; moves them up and down; removes one', async () => {
    const { editor, queue, folder, tasks, repo, pickChecklist } = queueViewFor();
    editor.answer(/^The task to add/, 'TASK-alpha: write alpha');
    assert.deepEqual(
      (await queue.addPrompt(folder)).map((task) => task.id),
      [1],
    );
    await queue.addPrompt(folder, 'TASK-beta: the selection');
    writeFile(repo, 'tasks.md', '# Tonight\n- [x] done already\n- [ ] TASK-gamma: write gamma\n  with details\n- [ ] TASK-delta: write delta\n');
    pickChecklist(path.join(repo, 'tasks.md'));
    assert.equal((await queue.addChecklist(folder)).length, 2);
    const before = await tasks();
    assert.deepEqual(
      before.map((task) => task.prompt),
      ['TASK-alpha: write alpha', 'TASK-beta: the selection', 'TASK-gamma: write gamma\n\nwith details', 'TASK-delta: write delta'],
    );
    await queue.move(folder, before[3]!, { by: -1 });
    await queue.move(folder, before[0]!, { by: 1 });
    await queue.move(folder, before[0]!, { position: 1 });
    await queue.move(folder, before[2]!, { by: 1 });
    assert.deepEqual(
      (await tasks()).map((task) => task.id),
      [1, 2, 4, 3],
    );
    editor.answer(/^Remove task 2/, 'Remove');
    await queue.remove(folder, before[1]!);
    await queue.remove(folder, before[0]!); // not confirmed: stays
    assert.deepEqual(
      (await tasks()).map((task) => task.id),
      [1, 4, 3],
    );
    assert.deepEqual(editor.texts('error'), []);
  });

  it('runs the queue (a success, a failure, a question), answers the question, opens a branch’s diff, merges one cleanly and refuses a conflicting one', async () => {
    const { editor, queue, folder, tasks, repo } = queueViewFor();
    for (const prompt of ['TASK-alpha: write alpha', 'TASK-broken: #fail at it', 'TASK-colour: #ask which colour']) await queue.addPrompt(folder, prompt);
    const changes: boolean[] = [];
    queue.onDidChange(() => changes.push(queue.isRunning(folder)));
    await queue.run(folder);
    assert.deepEqual(changes, [true, false], 'the view looked again as the run started and ended');
    const ran = await tasks();
    assert.deepEqual(
      ran.map((task) => [task.id, task.state, task.outcome]),
      [
        [1, 'finished', 'success'],
        [2, 'finished', 'failed'],
        [3, 'needs_input', null],
      ],
    );
    assert.match(editor.texts('info').at(-1)!, /^The queue of .+ is done: Queue done: 2 finished, 1 waiting for an answer, 0 left/);

    editor.answer(/^Task 3 asks: Which colour\?/, 'colour: blue');
    await queue.answer(folder, ran[2]!);
    const answered = (await tasks())[2]!;
    assert.deepEqual([answered.state, answered.outcome], ['finished', 'success']);

    await queue.openDiff(folder, ran[0]!);
    const alpha = ran[0]!;
    assert.deepEqual(editor.executed, [
      {
        command: MULTI_DIFF_COMMAND,
        args: [
          `Codeloops: task 1, ${alpha.branch} (1 files)`,
          [[`file:${fs.realpathSync(repo)}/alpha.txt`, 'blob:none:alpha.txt', `blob:${alpha.commit}:alpha.txt`]],
        ],
      },
    ]);

    // The user wrote colour.txt of their own meanwhile: that task's merge conflicts; alpha's merges.
    writeFile(repo, 'colour.txt', 'red\n');
    git(repo, 'add', 'colour.txt');
    git(repo, 'commit', '-q', '-m', 'my colour');
    await queue.merge(folder, answered);
    assert.deepEqual(editor.texts('warning'), ['Task 3 was not merged, nothing changed: git cannot merge these files cleanly: colour.txt.']);
    let undoOnce = true;
    editor.answer(/^Merged codeloops\/1-/, () => (undoOnce ? ((undoOnce = false), 'Undo Merge') : undefined));
    await queue.merge(folder, alpha);
    await editor.settled();
    assert.ok(editor.texts('info').includes(`Merged ${alpha.branch} into ${git(repo, 'branch', '--show-current').trim()} (1 files).`));
    assert.equal(git(repo, 'log', '-1', '--format=%s').trim(), 'my colour', 'the merge was undone');
    assert.equal(fs.existsSync(path.join(repo, 'alpha.txt')), false);
    await queue.merge(folder, alpha);
    await editor.settled();
    assert.equal(fs.readFileSync(path.join(repo, 'alpha.txt'), 'utf8'), 'alpha\n');
    assert.deepEqual(editor.texts('error'), []);
  });
});
