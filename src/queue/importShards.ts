import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readRegularFileSync } from '../files/regularFile.js';
import { isProcessAlive } from '../process/processGroup.js';
import { branchCommit } from '../git/branches.js';
import { GitCommandError, gitBytes, gitText } from '../git/gitProcess.js';
import { missingCommits, type Repository } from '../git/repository.js';
import { SNAPSHOT_REF_ROOT } from '../git/snapshots.js';
import { importStaged, MAX_RECORD_BYTES, stageBundle, type BundlePaths, type StagedBundle } from '../sessionBundle/sessionBundles.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { taskBranch, type QueueFile, type QueueTask } from '../sessionFormat/queueRecords.js';
import {
  BUNDLE_QUEUE_BRANCHES,
  BUNDLE_QUEUE_TASKS,
  bundledQueueTasksSchema,
  type BundledQueueTasks,
  type BundleQueue,
} from '../sessionFormat/sessionBundle.js';
import { inShard, shardText, type Shard } from '../sessionFormat/shards.js';
import type { QueueImportAnswer } from '../sessionFormat/cliAnswers.js';
import { MAX_TASK_ID, newTask, sourceDigest, uncountableIds } from './queueShards.js';
import type { QueueStore } from './queueStore.js';

/**
 * `queue import BUNDLE…`: the shards' bundles of one queue brought home, all of them or
 * nothing. Everything is checked first: each bundle whole and true to itself (its
 * tasks, sessions and branches agree; its commits are here), the bundles of one queue
 * and one shard count, each complete unless `partial`, and each task the home queue's
 * task of that id, never one that ran here. Then the success branches are created
 * (where a branch of that name is at that commit already, it is left; at another
 * commit, the import is refused: a branch here is never moved), the sessions imported,
 * and each task's outcome recorded in the home queue, so that `queue report` and
 * `queue merge` work on them as on tasks run here. A shard given twice is taken once;
 * the tasks of shards not given are said, and queued here. What an import is about to
 * make is written first (`<key>.import.json`): one killed midway is taken back by the next.
 */

export interface ShardImportRequest {
  store: QueueStore;
  repository: Repository;
  files: readonly string[];
  /** Take what a shard that stopped midway finished (the rest queued here). */
  partial: boolean;
  paths: BundlePaths;
  maxUnpackedBytes?: number;
}

/** A bundle read and checked against itself. */
interface ShardBundle {
  staged: StagedBundle;
  section: BundleQueue;
  tasks: BundledQueueTasks;
  shard: Shard;
  finished: QueueTask[];
}

export async function importShards(request: ShardImportRequest): Promise<QueueImportAnswer> {
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'codeloops-queue-import-'));
  try {
    const read: ShardBundle[] = [];
    for (const file of request.files) read.push(readShardBundle(await stageBundle(file, staging, request.maxUnpackedBytes)));
    const warnings: string[] = [];
    const bundles = oneOfEachShard(read, warnings);
    refuseMismatch(bundles);
    if (!request.partial) refuseIncomplete(bundles);
    const { repository, store } = request;
    for (const bundle of bundles) await checkCommitsHere(repository, bundle);
    await takeBackInterrupted(repository, request.paths, store, warnings);
    const plan = planRecords(store.read(), bundles);
    const branches = await branchesToCreate(repository, plan.imported);
    for (const bundle of bundles) await unbundleBranches(repository, bundle);
    const sessionIds = plan.imported.flatMap((entry) => entry.task.session_ids);
    // What this import is about to make, before it makes any of it: a process killed midway leaves it, for the next import to take back.
    const journal = journalOf(store);
    writeJournal(journal, { pid: process.pid, branches: Object.fromEntries(branches), sessions: sessionIds.filter((id) => !sessionHere(request.paths, id)) });
    try {
      await createBranches(repository, branches);
      return await importAndRecord(request, bundles, plan, branches, warnings);
    } finally {
      fs.rmSync(journal, { force: true });
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** The sessions imported, then the tasks recorded in the home queue; a failure takes back the branches and sessions this import made. */
async function importAndRecord(
  request: ShardImportRequest,
  bundles: readonly ShardBundle[],
  plan: RecordPlan,
  branches: ReadonlyMap<string, string>,
  warnings: string[],
): Promise<QueueImportAnswer> {
  const { repository, store } = request;
  let sessions: string[];
  try {
    const selections = bundles.map((bundle) => ({
      bundle: bundle.staged,
      sessions: new Set(plan.imported.filter((entry) => entry.bundle === bundle).flatMap((entry) => entry.task.session_ids)),
    }));
    sessions = (await importStaged({ ...request.paths, targetDir: repository.root }, selections)).sessions;
  } catch (error) {
    await deleteBranches(repository, branches);
    throw error;
  }
  let queued: number[];
  try {
    queued = await store.change((queue) => record(queue, planRecords(queue, bundles), bundles, warnings));
  } catch (error) {
    await deleteBranches(repository, branches);
    await forgetSessions(repository, request.paths, sessions);
    throw error;
  }
  return { ...answerOf(repository, bundles, plan, branches, sessions, warnings), queued };
}

/** What an import under way is making: its branches (at their commits) and the sessions not here before it. */
interface ImportJournal {
  pid: number;
  branches: Record<string, string>;
  sessions: string[];
}

/** `<key>.import.json` beside the queue's file. */
function journalOf(store: QueueStore): string {
  return store.file.replace(/\.json$/, '.import.json');
}

function writeJournal(file: string, journal: ImportJournal): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    fs.writeFileSync(file, JSON.stringify(journal) + '\n', { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    throw new CodeloopsError('queue_running', `Another queue import is under way (${file}). Nothing was imported.`, { file });
  }
}

function sessionHere(paths: BundlePaths, id: string): boolean {
  return fs.existsSync(paths.store.filePathOf(id)) || fs.existsSync(paths.sidecarDirOf(id));
}

/**
 * An import killed midway (its journal left, its process gone) made branches and
 * sessions the queue does not record: they are taken back (a branch only while it is
 * where that import put it; nothing the queue records), and said in the warnings. One
 * whose process still runs refuses this one.
 */
async function takeBackInterrupted(repository: Repository, paths: BundlePaths, store: QueueStore, warnings: string[]): Promise<void> {
  const file = journalOf(store);
  if (!fs.existsSync(file)) return;
  const journal = parseJson(readRegularFileSync(file)) as Partial<ImportJournal> | undefined;
  // Torn as its process was killed writing it: that import had made nothing yet.
  if (!journal || typeof journal !== 'object' || typeof journal.pid !== 'number') return void fs.rmSync(file, { force: true });
  if (journal.pid !== process.pid && isProcessAlive(journal.pid))
    throw new CodeloopsError('queue_running', `Another queue import (process ${journal.pid}) is under way. Nothing was imported.`, { pid: journal.pid });
  const recorded = store.read().tasks.filter((task) => task.state === 'finished');
  const sessions = (journal.sessions ?? []).filter((id) => typeof id === 'string' && !recorded.some((task) => task.session_ids.includes(id)));
  const branches = new Map(
    Object.entries(journal.branches ?? {}).filter(([branch, commit]) => !recorded.some((task) => task.branch === branch && task.commit === commit)),
  );
  await forgetSessions(repository, paths, sessions);
  await deleteBranches(repository, branches);
  fs.rmSync(file, { force: true });
  if (sessions.length > 0 || branches.size > 0)
    warnings.push(
      `an earlier queue import (process ${journal.pid}) stopped midway: took back what it had made and the queue does not record (${[...branches.keys(), ...sessions].join(', ')})`,
    );
}

/** The bundle's queue section and its tasks' records, each checked against the other, its sessions and the queue file it ran. */
function readShardBundle(staged: StagedBundle): ShardBundle {
  const { manifest, invalid } = staged;
  const section = manifest.queue;
  if (!section) throw invalid("it is not a queue shard's bundle (codeloops queue run --shard I/N --export FILE)");
  let text: string;
  try {
    const file = path.join(staged.root, ...BUNDLE_QUEUE_TASKS.split('/'));
    if ((fs.lstatSync(file, { throwIfNoEntry: false })?.size ?? 0) > MAX_RECORD_BYTES) throw new Error('too large');
    text = readRegularFileSync(file);
  } catch (error) {
    throw invalid(`its ${BUNDLE_QUEUE_TASKS} cannot be read (${(error as Error).message})`);
  }
  const parsed = bundledQueueTasksSchema.safeParse(parseJson(text));
  if (!parsed.success) throw invalid(`its ${BUNDLE_QUEUE_TASKS} is not a queue shard's tasks`);
  const tasks = parsed.data;
  if (sourceDigest(tasks.source) !== section.source) throw invalid(`its ${BUNDLE_QUEUE_TASKS} is not the queue file its manifest names`);
  const uncountable = uncountableIds(tasks.source);
  if (uncountable.length > 0) throw invalid(`its tasks name the task id ${uncountable.join(', ')}, past any queue's (${MAX_TASK_ID})`);
  const shard = section.shard ?? { index: 1, total: 1 };
  if (shard.index > shard.total) throw invalid(`its shard ${shardText(shard)} is not a shard`);
  const sourceIds = tasks.source.tasks.map((task) => task.id);
  if (JSON.stringify(sourceIds) !== JSON.stringify(section.task_ids)) throw invalid("its manifest's task ids are not its queue file's");
  const share = tasks.source.tasks.filter((_, index) => inShard(index + 1, shard));
  for (const record of tasks.records) {
    const own = share.find((task) => task.id === record.id);
    if (!own || own.prompt !== record.prompt) throw invalid(`its task ${record.id} is not one of shard ${shardText(shard)}'s tasks`);
    if (record.branch !== taskBranch(record.id, record.prompt)) throw invalid(`its task ${record.id} names the branch ${record.branch}, not its own`);
    const listed = section.tasks.find((task) => task.id === record.id);
    const same = listed && listed.state === record.state && listed.outcome === record.outcome && listed.commit === record.commit;
    if (!same || listed.branch !== record.branch) throw invalid(`its manifest and its ${BUNDLE_QUEUE_TASKS} disagree on task ${record.id}`);
  }
  if (section.tasks.length !== tasks.records.length || new Set(section.tasks.map((task) => task.id)).size !== section.tasks.length)
    throw invalid(`its manifest names tasks its ${BUNDLE_QUEUE_TASKS} does not hold`);
  const finished = tasks.records.filter((task) => task.state === 'finished');
  checkSessions(staged, finished);
  const complete = tasks.records.length === share.length && finished.length === share.length;
  if (section.complete && !complete) throw invalid(`it says shard ${shardText(shard)} finished, but not every task of its share did`);
  for (const task of finished) if (task.outcome === 'success' && task.commit === null) throw invalid(`its task ${task.id} succeeded without a commit`);
  return { staged, section, tasks, shard, finished };
}

/** The finished tasks' sessions are the bundle's sessions, every one of them. */
function checkSessions(staged: StagedBundle, finished: readonly QueueTask[]): void {
  const bundled = new Set(staged.manifest.sessions.map((entry) => entry.id));
  const named = new Set(finished.flatMap((task) => task.session_ids));
  const absent = [...named].filter((id) => !bundled.has(id));
  if (absent.length > 0) throw staged.invalid(`its tasks name sessions it does not hold (${absent.join(', ')})`, { sessions: absent });
  const stray = [...bundled].filter((id) => !named.has(id));
  if (stray.length > 0) throw staged.invalid(`it holds sessions none of its finished tasks ran (${stray.join(', ')})`, { sessions: stray });
}

/** A shard given twice (the same bundle, or a run of it again) is taken once: the bundle with the most tasks finished. */
function oneOfEachShard(bundles: readonly ShardBundle[], warnings: string[]): ShardBundle[] {
  const byShard = new Map<string, ShardBundle>();
  for (const bundle of bundles) {
    const key = `${bundle.section.source} ${shardText(bundle.shard)}`;
    const other = byShard.get(key);
    if (!other) byShard.set(key, bundle);
    else {
      const kept = bundle.finished.length > other.finished.length ? bundle : other;
      byShard.set(key, kept);
      const files = bundle.staged.file === other.staged.file ? bundle.staged.file : `${other.staged.file} and ${bundle.staged.file}`;
      warnings.push(`shard ${shardText(bundle.shard)} was given twice (${files}): took ${kept.staged.file}`);
    }
  }
  return [...byShard.values()].sort((a, b) => a.shard.index - b.shard.index);
}

/** The bundles of one queue file and one shard count, or none. */
function refuseMismatch(bundles: readonly ShardBundle[]): void {
  const [first] = bundles;
  if (!first) return;
  const differences: string[] = [];
  for (const bundle of bundles.slice(1)) {
    if (bundle.section.source !== first.section.source)
      differences.push(`${bundle.staged.file} ran another queue file (or another commit) than ${first.staged.file}`);
    else if (bundle.shard.total !== first.shard.total)
      differences.push(`${bundle.staged.file} is shard ${shardText(bundle.shard)}, ${first.staged.file} shard ${shardText(first.shard)}`);
  }
  if (differences.length > 0)
    throw new CodeloopsError('queue_mismatch', `These bundles are not the shards of one queue run: ${differences.join('; ')}. Nothing was imported.`, {
      differences,
    });
}

function refuseIncomplete(bundles: readonly ShardBundle[]): void {
  const stopped = bundles.filter((bundle) => !bundle.section.complete);
  if (stopped.length === 0) return;
  const unfinished = stopped.flatMap((bundle) =>
    bundle.tasks.source.tasks.filter((task, index) => inShard(index + 1, bundle.shard) && !bundle.finished.some((done) => done.id === task.id)),
  );
  const which = stopped.map((bundle) => `${bundle.staged.file} (shard ${shardText(bundle.shard)})`).join(', ');
  throw new CodeloopsError(
    'shard_incomplete',
    `${which} did not finish ${stopped.length === 1 ? 'its' : 'their'} share: task ${unfinished.map((task) => task.id).join(', ')} did not finish there. Nothing was imported.`,
    { unfinished: unfinished.map((task) => task.id), bundles: stopped.map((bundle) => bundle.staged.file) },
  );
}

/** The commit the tasks started from, and the commits the success branches build on, must be here: else the bundle is another repository's. */
async function checkCommitsHere(repository: Repository, bundle: ShardBundle): Promise<void> {
  const { staged } = bundle;
  const base = bundle.tasks.source.base_commit;
  const here = base !== null && /^[0-9a-f]{40,64}$/.test(base) && (await missingCommits(repository, [base])).length === 0;
  if (!here)
    throw staged.invalid(`its tasks start from commit ${base}, which ${repository.root} does not have: import it into a clone of the repository it ran in`, {
      missing_commits: [base],
    });
  const file = path.join(staged.root, ...BUNDLE_QUEUE_BRANCHES.split('/'));
  const successes = bundle.finished.filter((task) => task.outcome === 'success');
  if (!fs.existsSync(file)) {
    if (successes.length > 0) throw staged.invalid(`it has no ${BUNDLE_QUEUE_BRANCHES} for its successes' branches`);
    return;
  }
  try {
    await gitBytes(repository.root, ['bundle', 'verify', file]);
  } catch (error) {
    const stderr = error instanceof GitCommandError ? error.stderr : String(error);
    const missing = [...stderr.matchAll(/\b([0-9a-f]{40})\b/g)].map((match) => match[1]!);
    throw staged.invalid(`its branches are not a git bundle of this repository's commits (${stderr.trim().split('\n').at(-1) ?? 'git bundle verify failed'})`, {
      missing_commits: missing,
    });
  }
  const heads = (await gitText(repository.root, ['bundle', 'list-heads', file])).split('\n').filter(Boolean);
  const wanted = new Map(successes.map((task) => [`refs/heads/${task.branch}`, task.commit]));
  for (const line of heads) {
    const [oid, ref] = [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)];
    if (wanted.get(ref) !== oid) throw staged.invalid(`its branches name ${ref} at ${oid.slice(0, 12)}, which is no success of its tasks`);
    wanted.delete(ref);
  }
  if (wanted.size > 0) throw staged.invalid(`its branches lack ${[...wanted.keys()].join(', ')}`);
}

interface PlannedTask {
  bundle: ShardBundle;
  task: QueueTask;
}

interface RecordPlan {
  imported: PlannedTask[];
  /** Finished tasks this queue has already from these bundles. */
  already: number[];
}

/**
 * Which finished tasks are recorded here: each must be the home queue's task of its id
 * (the same prompt) and not one that ran here; one recorded from these sessions before
 * is left (imported already). Else `queue_mismatch`, naming the tasks.
 */
function planRecords(queue: QueueFile, bundles: readonly ShardBundle[]): RecordPlan {
  const imported: PlannedTask[] = [];
  const already: number[] = [];
  const clashes: string[] = [];
  for (const bundle of bundles) {
    for (const source of bundle.tasks.source.tasks) {
      const here = queue.tasks.find((task) => task.id === source.id);
      if (here && here.prompt !== source.prompt) clashes.push(`task ${source.id} here is another task ("${here.prompt.split('\n')[0]}")`);
    }
    for (const task of bundle.finished) {
      const here = queue.tasks.find((candidate) => candidate.id === task.id);
      if (!here || (here.state === 'queued' && here.session_ids.length === 0)) imported.push({ bundle, task });
      else if (here.state === 'finished' && here.imported_from && task.session_ids.every((id) => here.session_ids.includes(id))) already.push(task.id);
      else if (here.prompt === task.prompt) clashes.push(`task ${task.id} has run here too (${here.state === 'finished' ? here.outcome : here.state})`);
    }
  }
  if (clashes.length > 0)
    throw new CodeloopsError(
      'queue_mismatch',
      `The bundles' tasks are not this queue's to record: ${[...new Set(clashes)].join('; ')}. Nothing was imported.`,
      {
        tasks: [...new Set(clashes)],
      },
    );
  return { imported, already };
}

/** The success branches to create here: none of that name, or one at that commit already (left as it is); one at another commit refuses the import. */
async function branchesToCreate(repository: Repository, imported: readonly PlannedTask[]): Promise<Map<string, string>> {
  const create = new Map<string, string>();
  const taken: string[] = [];
  for (const { task } of imported) {
    if (task.outcome !== 'success' || task.commit === null) continue;
    const here = await branchCommit(repository, task.branch);
    if (here === null) create.set(task.branch, task.commit);
    else if (here !== task.commit) taken.push(task.branch);
  }
  if (taken.length > 0)
    throw new CodeloopsError(
      'branch_exists',
      `The branch${taken.length === 1 ? '' : 'es'} ${taken.join(', ')} already exist${taken.length === 1 ? 's' : ''} here at another commit than the task's success; a branch is never moved. Nothing was imported.`,
      { branches: taken },
    );
  return create;
}

/** The branches' objects only (unreferenced until their branches are made): the sessions' snapshots may build on them. */
async function unbundleBranches(repository: Repository, bundle: ShardBundle): Promise<void> {
  const file = path.join(bundle.staged.root, ...BUNDLE_QUEUE_BRANCHES.split('/'));
  if (!fs.existsSync(file)) return;
  try {
    await gitBytes(repository.root, ['bundle', 'unbundle', file]);
  } catch (error) {
    throw bundle.staged.invalid(`git cannot read its branches (${error instanceof GitCommandError ? error.stderr.trim() : String(error)})`);
  }
}

/** In one transaction, each only where there is none: one made meanwhile refuses them all. */
async function createBranches(repository: Repository, branches: ReadonlyMap<string, string>): Promise<void> {
  if (branches.size === 0) return;
  const input = [...branches].map(([branch, commit]) => `create refs/heads/${branch} ${commit}\n`).join('');
  try {
    await gitBytes(repository.root, ['update-ref', '-m', 'codeloops: queue import', '--stdin'], { input: Buffer.from(input) });
  } catch (error) {
    const reason = error instanceof GitCommandError ? error.stderr.trim() : String(error);
    if (!/exists/.test(reason)) throw error;
    const inTheWay = /'refs\/heads\/([^']+)' exists; cannot create 'refs\/heads\/([^']+)'/.exec(reason);
    if (inTheWay)
      throw new CodeloopsError(
        'branch_exists',
        `The branch ${inTheWay[1]} is in the way of the task's branch ${inTheWay[2]} (git keeps no branch inside another's name); rename it (git branch -m ${inTheWay[1]} <name>). Nothing was imported.`,
        { branches: [inTheWay[1]!] },
      );
    throw new CodeloopsError('branch_exists', `A task's branch was made here meanwhile (${reason}); a branch is never moved. Nothing was imported.`, {
      branches: [...branches.keys()],
    });
  }
}

/** Each branch this import made, while it is still where it was put. */
async function deleteBranches(repository: Repository, branches: ReadonlyMap<string, string>): Promise<void> {
  if (branches.size === 0) return;
  const input = [...branches].map(([branch, commit]) => `delete refs/heads/${branch} ${commit}\n`).join('');
  await gitBytes(repository.root, ['update-ref', '--stdin'], { input: Buffer.from(input) }).catch(() => undefined);
}

/** The sessions this import made (none of them was here: the import refuses an id in use), taken back. */
async function forgetSessions(repository: Repository, paths: BundlePaths, sessions: readonly string[]): Promise<void> {
  for (const id of sessions) {
    fs.rmSync(paths.store.filePathOf(id), { force: true });
    fs.rmSync(paths.sidecarDirOf(id), { recursive: true, force: true });
    const refs = (await gitText(repository.root, ['for-each-ref', '--format=%(refname)', `${SNAPSHOT_REF_ROOT}/${id}/`]).catch(() => '')).split('\n');
    const input = refs
      .filter(Boolean)
      .map((ref) => `delete ${ref}\n`)
      .join('');
    if (input) await gitBytes(repository.root, ['update-ref', '--stdin'], { input: Buffer.from(input) }).catch(() => undefined);
  }
}

/**
 * The tasks recorded in the home queue, in the queue file's order: each finished one as
 * its shard left it, and, queued, each not here yet (of a shard not given, or not
 * finished by its shard). Returns the ids queued.
 */
function record(queue: QueueFile, plan: RecordPlan, bundles: readonly ShardBundle[], warnings: string[]): number[] {
  const queued: number[] = [];
  const [first] = bundles;
  if (!first) return queued;
  queue.base_commit ??= first.tasks.source.base_commit;
  for (const source of first.tasks.source.tasks) {
    const imported = plan.imported.find((entry) => entry.task.id === source.id);
    const index = queue.tasks.findIndex((candidate) => candidate.id === source.id);
    if (imported) {
      const from = `${path.basename(imported.bundle.staged.file)} (shard ${shardText(imported.bundle.shard)})`;
      const entry: QueueTask = { ...imported.task, worktree: null, question: null, imported_from: from };
      if (index >= 0) queue.tasks[index] = entry;
      else queue.tasks.push(entry);
    } else if (index < 0) {
      // A bundle never brings commands to run here: a task queued from it keeps its flags but its checks (shell commands).
      const { check, ...flags } = source.flags;
      if (check?.length)
        warnings.push(
          `task ${source.id} is queued here without the checks its bundle gave it (${check.length}); add them here if you want them: codeloops queue remove ${source.id}, then queue add --check …`,
        );
      queue.tasks.push(newTask({ ...source, flags }));
      queued.push(source.id);
    }
  }
  queue.next_id = Math.max(queue.next_id, ...queue.tasks.map((task) => task.id + 1));
  return queued;
}

function answerOf(
  repository: Repository,
  bundles: readonly ShardBundle[],
  plan: RecordPlan,
  branches: ReadonlyMap<string, string>,
  sessions: readonly string[],
  warnings: string[],
): Omit<QueueImportAnswer, 'queued'> {
  const [first] = bundles;
  const given = new Set(bundles.map((bundle) => bundle.shard.index));
  const total = first?.shard.total ?? 1;
  const all = first?.tasks.source.tasks ?? [];
  // The shard a position is dealt to: the one `inShard` says.
  const shardOf = (position: number) => ((position - 1) % total) + 1;
  const missing = all.flatMap((task, index) => (given.has(shardOf(index + 1)) ? [] : [{ id: task.id, shard: `${shardOf(index + 1)}/${total}` }]));
  const finishedIds = new Set(bundles.flatMap((bundle) => bundle.finished.map((task) => task.id)));
  const unfinished = all.filter((task, index) => given.has(shardOf(index + 1)) && !finishedIds.has(task.id)).map((task) => task.id);
  return {
    repository: repository.root,
    shards: bundles.map((bundle) => ({ file: bundle.staged.file, shard: bundle.section.shard, complete: bundle.section.complete })),
    imported: plan.imported.map(({ task }) => ({ id: task.id, outcome: task.outcome!, branch: task.branch, commit: task.commit, sessions: task.session_ids })),
    already_imported: plan.already,
    unfinished,
    missing,
    branches: [...branches.keys()],
    sessions: [...sessions],
    warnings,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
