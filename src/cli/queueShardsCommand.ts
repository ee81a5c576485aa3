import fs from 'node:fs';
import path from 'node:path';
import { openRepository } from '../git/repository.js';
import { importShards } from '../queue/importShards.js';
import { QueueStore } from '../queue/queueStore.js';
import { exportQueue } from '../queue/queueShards.js';
import { groupsDir } from '../sessionFormat/candidateGroupFiles.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { QUEUE_EXPORT_FILE } from '../sessionFormat/queueRecords.js';
import { sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { shardText } from '../sessionFormat/shards.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { printAnswer } from './answers.js';
import { EXIT_CODES } from './exitCodes.js';
import { openStore } from './openStore.js';
import { writeStderr } from './terminalRun.js';

/**
 * `codeloops queue export` and `queue import`: a queue across machines (see
 * `queue/queueShards.ts` and `queue/importShards.ts`). The shards' side is `queue run
 * --shard I/N --tasks FILE --push REMOTE --export BUNDLE` (`queueCommand.ts`).
 */

interface Options {
  workingDir?: string;
  json?: boolean;
}

/** `queue export [-o FILE]`: the tasks not finished, to commit with the repository (`codeloops-queue.json` at its top). */
export async function queueExportCommand(options: Options & { output?: string }): Promise<number> {
  const repository = await openRepository(path.resolve(options.workingDir ?? process.cwd()));
  const exported = await exportQueue(QueueStore.of(repository), repository);
  const file = path.resolve(options.output ?? path.join(repository.root, QUEUE_EXPORT_FILE));
  if (fs.statSync(file, { throwIfNoEntry: false })?.isDirectory())
    throw new CodeloopsError('usage', `${file} is a folder: give a file (-o tasks.json).`, { file });
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temporary, JSON.stringify(exported, null, 2) + '\n');
    fs.renameSync(temporary, file);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw new CodeloopsError('usage', `${file} cannot be written: ${(error as Error).message}`, { file });
  }
  const ids = exported.tasks.map((task) => task.id);
  if (options.json) printAnswer('queue export', { file, tasks: ids, base_commit: exported.base_commit });
  else {
    const relative = path.relative(repository.root, file);
    process.stdout.write(
      `Wrote ${sanitizeForTerminal(file)}: ${ids.length} task(s) (${ids.join(', ')}), their branches from ${exported.base_commit?.slice(0, 12) ?? 'HEAD'}.\n` +
        `Commit it, then on each machine: codeloops queue run --shard I/N --tasks ${sanitizeForTerminal(relative.startsWith('..') ? file : relative)} --export shard-I.tar.gz\n`,
    );
  }
  return EXIT_CODES.success;
}

/** `queue import BUNDLE… [-d DIR] [--partial]`: the shards' tasks, sessions and branches brought home, all of it or nothing. */
export async function queueImportCommand(files: readonly string[], options: Options & { partial?: boolean; maxUnpackedMb?: number }): Promise<number> {
  const repository = await openRepository(path.resolve(options.workingDir ?? process.cwd()));
  const result = await importShards({
    store: QueueStore.of(repository),
    repository,
    files: files.map((file) => path.resolve(file)),
    partial: Boolean(options.partial),
    paths: { store: openStore(), sidecarDirOf: (id) => sidecarDirOf(id), groupsDirectory: groupsDir() },
    maxUnpackedBytes: options.maxUnpackedMb === undefined ? undefined : options.maxUnpackedMb * 1024 * 1024,
  });
  if (options.json) printAnswer('queue import', result);
  else {
    const out = (line: string) => process.stdout.write(sanitizeForTerminal(line) + '\n');
    for (const shard of result.shards)
      out(`${shard.file}: shard ${shard.shard ? shardText(shard.shard) : 'of all tasks'}${shard.complete ? '' : ' (stopped midway)'}`);
    for (const task of result.imported)
      out(
        `Task ${task.id}: ${task.outcome}${task.commit ? ` on ${task.branch}` : ''} (${task.sessions.length} session${task.sessions.length === 1 ? '' : 's'})`,
      );
    if (result.already_imported.length > 0) out(`Imported before: task ${result.already_imported.join(', ')}`);
    if (result.unfinished.length > 0) out(`Not finished by its shard: task ${result.unfinished.join(', ')}`);
    if (result.missing.length > 0)
      out(`Not given (their shards' bundles): ${result.missing.map((task) => `task ${task.id} (shard ${task.shard})`).join(', ')}`);
    if (result.queued.length > 0) out(`Queued here for want of an outcome: task ${result.queued.join(', ')} (codeloops queue run runs them here)`);
    out('See: codeloops queue report');
  }
  for (const warning of result.warnings) writeStderr(`warning: ${sanitizeForTerminal(warning)}\n`);
  return EXIT_CODES.success;
}
