import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NotARegularFileError, readRegularFileSync } from '../files/regularFile.js';
import { GitCommandError, gitBytes, gitText } from '../git/gitProcess.js';
import { headCommit, type Repository } from '../git/repository.js';
import { exportSessions } from '../sessionBundle/sessionExport.js';
import type { BundlePaths } from '../sessionBundle/sessionBundles.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { queueExportFileSchema, type QueueExportFile, type QueueFile, type QueueTask, type TaskFlags, type TaskPush } from '../sessionFormat/queueRecords.js';
import { BUNDLE_QUEUE_BRANCHES, BUNDLE_QUEUE_TASKS, type BundledQueueTasks, type BundleQueue } from '../sessionFormat/sessionBundle.js';
import { inShard, type Shard } from '../sessionFormat/shards.js';
import type { ExportResult } from '../sessionFormat/sessionBundle.js';
import { tasksOfChecklist } from './checklist.js';
import { queuedTask, type QueueStore } from './queueStore.js';

/**
 * A queue across machines, the shard's side. `queue export` writes the queue's tasks
 * not finished to a file that travels with the repository; on a clone elsewhere,
 * `queue run --shard I/N --tasks FILE` adds that file's tasks (or a Markdown
 * checklist's, numbered 1, 2, 3… in its order) to the clone's queue under the same ids,
 * runs those whose position in the file is its share (`inShard`), pushes each success
 * branch where `--push` says, and writes a bundle (`--export`) of its share's tasks:
 * their sessions, their records and their success branches. `importShards.ts` brings
 * them home.
 */

/** `queue export`: the tasks not finished, in the queue's order, and the commit their branches start from. */
export async function exportQueue(store: QueueStore, repository: Repository): Promise<QueueExportFile> {
  const queue = store.read();
  const tasks = queue.tasks.filter((task) => task.state !== 'finished');
  if (tasks.length === 0)
    throw new CodeloopsError('queue_empty', `The queue of ${queue.repository} has no task left to run: nothing to export.`, { tasks: queue.tasks.length });
  return {
    format: 'codeloops-queue',
    version: 1,
    exported_at: new Date().toISOString(),
    base_commit: queue.base_commit ?? (await headCommit(repository)),
    tasks: tasks.map((task) => ({ id: task.id, prompt: task.prompt, flags: task.flags })),
  };
}

/** The tasks a shard runs its share of: an exported queue file, or a Markdown checklist (its items numbered from 1, with the flags given). */
export interface TaskSource {
  file: QueueExportFile;
  /** The same on every machine given the same tasks at the same commit: shards of one queue agree on it, and home checks it. */
  digest: string;
}

/** Reads `--tasks FILE`: JSON that is a queue file, or else a Markdown checklist. */
export async function readTaskSource(file: string, repository: Repository, flags: TaskFlags): Promise<TaskSource> {
  let text: string;
  try {
    text = readRegularFileSync(file);
  } catch (error) {
    const why = error instanceof NotARegularFileError ? error.message : (error as Error).message;
    throw new CodeloopsError('usage', `Cannot read the tasks file ${file}: ${why}.`, { file });
  }
  let exported: QueueExportFile;
  const json = parseJson(text);
  if (json === undefined && (file.endsWith('.json') || text.trimStart().startsWith('{')))
    throw new CodeloopsError('usage', `${file} is not valid JSON: give a queue file written by "codeloops queue export", or a Markdown checklist.`, { file });
  if (json !== undefined) {
    const parsed = queueExportFileSchema.safeParse(json);
    if (!parsed.success)
      throw new CodeloopsError('usage', `${file} is JSON but not a queue file written by "codeloops queue export" (${parsed.error.issues[0]?.message}).`, {
        file,
      });
    exported = parsed.data;
    const ids = new Set(exported.tasks.map((task) => task.id));
    if (ids.size !== exported.tasks.length) throw new CodeloopsError('usage', `${file} names a task id twice.`, { file });
    const uncountable = uncountableIds(exported);
    if (uncountable.length > 0)
      throw new CodeloopsError('usage', `${file} names the task id ${uncountable.join(', ')}: a queue counts its ids up to ${MAX_TASK_ID}.`, { file });
  } else {
    const prompts = tasksOfChecklist(text);
    if (prompts.length === 0) throw new CodeloopsError('usage', `${file} has no unchecked item ("- [ ] …"): no task to run.`, { file });
    exported = {
      format: 'codeloops-queue',
      version: 1,
      exported_at: new Date(0).toISOString(),
      base_commit: await headCommit(repository),
      tasks: prompts.map((prompt, index) => ({ id: index + 1, prompt, flags })),
    };
  }
  if (exported.base_commit === null) throw new CodeloopsError('usage', `The repository ${repository.root} has no commit yet: a task's branch needs one.`, {});
  const named = /^[0-9a-f]{40,64}$/.test(exported.base_commit);
  const there = named ? await gitText(repository.root, ['rev-parse', '--verify', '--quiet', `${exported.base_commit}^{commit}`], { mayFindNothing: true }) : '';
  if (there.trim() === '')
    throw new CodeloopsError(
      'usage',
      `${file} starts its tasks' branches at ${exported.base_commit}, which ${repository.root} does not have: fetch it (a full clone, not a shallow one).`,
      { file, base_commit: exported.base_commit },
    );
  return { file: exported, digest: sourceDigest(exported) };
}

/** The largest task id a queue file may name: the queue counts on from its largest id, and must stay exact. */
export const MAX_TASK_ID = 1_000_000_000;

/** The ids of the file's tasks past `MAX_TASK_ID`. */
export function uncountableIds(file: QueueExportFile): number[] {
  return file.tasks.filter((task) => task.id > MAX_TASK_ID).map((task) => task.id);
}

/** What names a queue file across machines: its base and its tasks (ids, prompts, flags), hashed. */
export function sourceDigest(file: QueueExportFile): string {
  return createHash('sha256')
    .update(JSON.stringify({ base: file.base_commit, tasks: file.tasks.map(({ id, prompt, flags }) => [id, prompt, flags]) }))
    .digest('hex')
    .slice(0, 16);
}

/**
 * Puts the file's tasks into the clone's queue under their ids, once: a task already
 * there (the same id and prompt) is left as it is, so the same file twice adds nothing
 * twice and a run carries on where the last stopped. A task of that id with another
 * prompt is another queue's: refused (`queue_mismatch`), nothing added.
 */
export function addSourceTasks(store: QueueStore, source: TaskSource): Promise<QueueTask[]> {
  return store.change((queue) => {
    const clashes = source.file.tasks.filter((task) => {
      const here = queue.tasks.find((candidate) => candidate.id === task.id);
      return here !== undefined && here.prompt !== task.prompt;
    });
    if (clashes.length > 0)
      throw new CodeloopsError(
        'queue_mismatch',
        `This repository's queue has other tasks under the ids ${clashes.map((task) => task.id).join(', ')} of the tasks file: it is not that file's queue.`,
        { tasks: clashes.map((task) => task.id) },
      );
    queue.base_commit ??= source.file.base_commit;
    const added = source.file.tasks.filter((task) => !queue.tasks.some((candidate) => candidate.id === task.id)).map((task) => newTask(task));
    queue.tasks.push(...added);
    queue.next_id = Math.max(queue.next_id, ...queue.tasks.map((task) => task.id + 1));
    return added;
  });
}

/** A task of a queue file, queued under its id; its branch named as its queue at home names it. */
export function newTask(task: QueueExportFile['tasks'][number]): QueueTask {
  return queuedTask(task.id, task.prompt, task.flags);
}

/** The ids of the file's tasks dealt to `shard`, by their position in the file. */
export function shareOf(source: TaskSource, shard: Shard | null): number[] {
  return source.file.tasks.filter((_, index) => inShard(index + 1, shard)).map((task) => task.id);
}

/**
 * `git push REMOTE refs/heads/<branch>`, as an argument list, never forced (a branch the
 * remote has at another commit stays, and the push fails); what happened, never thrown.
 * The remote is recorded, and said, without the credentials a URL may hold (they would
 * travel in the shard's bundle); why it failed is git's own words, not its hints.
 */
export async function pushBranch(repository: Repository, remote: string, branch: string): Promise<TaskPush> {
  const shown = withoutCredentials(remote);
  try {
    await gitBytes(repository.root, ['push', '--quiet', '--', remote, `refs/heads/${branch}:refs/heads/${branch}`]);
    return { remote: shown, pushed: true, error: null };
  } catch (error) {
    const why =
      error instanceof GitCommandError
        ? error.stderr
            .split('\n')
            .map((line) => line.trim())
            .filter((line) => line !== '' && !line.startsWith('hint:'))
            .slice(-3)
            .join(' ')
        : (error as Error).message;
    return { remote: shown, pushed: false, error: (why || String(error)).split(remote).join(shown) };
  }
}

/** A remote's URL without its user and password (`https://***@host/…`); a remote's name, a path or a URL without them as it is. */
export function withoutCredentials(remote: string): string {
  return remote.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/]*@/i, '$1***@');
}

export interface ShardBundleRequest {
  store: QueueStore;
  repository: Repository;
  source: TaskSource;
  shard: Shard | null;
  share: readonly number[];
  output: string;
  paths: BundlePaths;
}

/**
 * Writes the shard's bundle, whole, in place of the last one (`exportSessions` renames a
 * new file over it): the finished tasks' sessions, every task of its share as the queue records it,
 * and the success branches as a git bundle from the commits they started at.
 */
export async function writeShardBundle(request: ShardBundleRequest): Promise<ExportResult> {
  const { store, repository, source, shard, share, output } = request;
  const queue: QueueFile = store.read();
  const records = share.map((id) => queue.tasks.find((task) => task.id === id)).filter((task): task is QueueTask => task !== undefined);
  const finished = records.filter((task) => task.state === 'finished');
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'codeloops-queue-export-'));
  try {
    const tasksFile = path.join(staging, 'tasks.json');
    const bundled: BundledQueueTasks = { source: source.file, records };
    fs.writeFileSync(tasksFile, JSON.stringify(bundled, null, 2) + '\n');
    const files = [{ name: BUNDLE_QUEUE_TASKS, source: tasksFile }];
    const successes = finished.filter((task) => task.outcome === 'success' && task.commit !== null);
    if (successes.length > 0) {
      const branches = path.join(staging, 'branches.bundle');
      const starts = [...new Set(successes.map((task) => task.start_commit ?? source.file.base_commit!))];
      await gitBytes(repository.root, ['bundle', 'create', '--quiet', branches, ...successes.map((task) => `refs/heads/${task.branch}`), '--not', ...starts]);
      files.push({ name: BUNDLE_QUEUE_BRANCHES, source: branches });
    }
    const section: BundleQueue = {
      source: source.digest,
      shard,
      complete: records.length === share.length && finished.length === share.length,
      task_ids: source.file.tasks.map((task) => task.id),
      tasks: records.map((task) => ({
        id: task.id,
        state: task.state,
        outcome: task.outcome,
        branch: task.branch,
        commit: task.commit,
        session_ids: task.state === 'finished' ? task.session_ids : [],
        push: task.push ?? null,
      })),
    };
    const sessions = finished.flatMap((task) => task.session_ids);
    return await exportSessions(sessions, output, request.paths, { manifest: { queue: section }, files });
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A queue run's own tasks as a source (no `--tasks`): every task of the queue, in its order, from its base. */
export async function queueAsSource(store: QueueStore, repository: Repository): Promise<TaskSource> {
  const queue = store.read();
  const file: QueueExportFile = {
    format: 'codeloops-queue',
    version: 1,
    exported_at: new Date(0).toISOString(),
    base_commit: queue.base_commit ?? (await headCommit(repository)),
    tasks: queue.tasks.map((task) => ({ id: task.id, prompt: task.prompt, flags: task.flags })),
  };
  return { file, digest: sourceDigest(file) };
}

export interface ShardOutputsRequest {
  store: QueueStore;
  repository: Repository;
  /** `--push REMOTE`. */
  remote: string | null;
  /** `--export FILE`: the bundle, rewritten as each task ends and when the run ends. */
  bundle: ShardBundleRequest | null;
  onPushed?: (task: number, branch: string, push: TaskPush) => void;
  /** A bundle written midway that failed: said, and tried again at the next task's end and the run's. */
  onBundleFailed?: (error: Error) => void;
}

/**
 * What a shard does as its tasks end, one after another in the order they end: a
 * success's branch pushed (the push recorded on the task, a failed one too), and the
 * bundle written again, so that a shard killed between two tasks leaves the bundle of
 * those that finished.
 */
export class ShardOutputs {
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly request: ShardOutputsRequest) {}

  taskFinished(task: number, outcome: string, branch: string): void {
    const { request } = this;
    this.chain = this.chain.then(async () => {
      if (outcome === 'success' && request.remote !== null && branch !== '') {
        const push = await pushBranch(request.repository, request.remote, branch);
        await request.store.changeTask(task, (stored) => void (stored.push = push)).catch(() => undefined);
        request.onPushed?.(task, branch, push);
      }
      if (request.bundle) await writeShardBundle(request.bundle).catch((error: Error) => request.onBundleFailed?.(error));
    });
  }

  /** Waits for what the tasks' ends started, then writes the bundle a last time (a failure thrown). */
  async settle(): Promise<ExportResult | null> {
    await this.chain;
    return this.request.bundle ? writeShardBundle(this.request.bundle) : null;
  }
}
