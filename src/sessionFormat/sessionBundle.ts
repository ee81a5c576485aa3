import { evalRecordLineSchema, evalResultsSchema } from './evalRecords.js';
import { queueExportFileSchema, queueTaskSchema, TASK_OUTCOMES, TASK_STATES } from './queueRecords.js';
import { shardSchema } from './shards.js';
import * as z from './zod.js';

/**
 * A sessions bundle (`codeloops sessions export <id…> -o bundle.tar.gz`): a gzipped
 * tar holding one folder, `codeloops-bundle/`, with
 *
 *     manifest.json          this file's schema
 *     sessions/<id>.jsonl    the session files, as written
 *     sidecars/<id>/…        their sidecar records and raw agent output
 *     groups/<group>/…       the records of the candidate groups they belong to
 *     snapshots.bundle       their snapshot refs (`refs/codeloops/<id>/…`) as a git bundle
 *     eval/record.jsonl      an eval shard's bundle (`codeloops eval --export`): its eval's record
 *     queue/tasks.json       a queue shard's bundle (`codeloops queue run --shard --export`): its tasks
 *     queue/branches.bundle  and their success branches (`refs/heads/codeloops/…`) as a git bundle
 *
 * The git bundle leaves out what the repository's own branches, tags and remotes
 * hold: importing needs a clone of the same repository that has those commits.
 */

export const BUNDLE_ROOT = 'codeloops-bundle';
export const BUNDLE_MANIFEST = 'manifest.json';
export const BUNDLE_SNAPSHOTS = 'snapshots.bundle';

/** Where a working directory is inside its repository, to put it at the same place in another clone. */
const placement = {
  /** The working directory on the machine that exported it. */
  working_dir: z.string(),
  /** Its path from the top of its repository (`''`: the top itself), with forward slashes. */
  relative_dir: z.string(),
};

/** Where an eval shard's bundle holds its eval's record (`evals/<eval_id>.jsonl` where it ran). */
export const BUNDLE_EVAL_RECORD = 'eval/record.jsonl';

/**
 * What an eval shard's bundle (`codeloops eval SUITE --shard I/N --export FILE`) says of
 * itself: which eval and shard, and whether every run of its share finished. A shard
 * that stopped midway still writes its bundle, with the runs that finished.
 */
export const bundleEvalSchema = z.object({
  eval_id: z.string(),
  /** Its share of the eval's runs; null: all of them. */
  shard: z.nullable(shardSchema),
  /** Every run of its share finished. */
  complete: z.boolean(),
  /** How many runs its share has, and how many of them finished. */
  runs: z.int().check(z.nonnegative()),
  finished: z.int().check(z.nonnegative()),
});
export type BundleEval = z.infer<typeof bundleEvalSchema>;

/** A line of the eval record a bundle carries: the record's own schema. */
export const bundledEvalLineSchema = evalRecordLineSchema;

/** Where a queue shard's bundle holds its tasks (`bundledQueueTasksSchema`), and its success branches as a git bundle. */
export const BUNDLE_QUEUE_TASKS = 'queue/tasks.json';
export const BUNDLE_QUEUE_BRANCHES = 'queue/branches.bundle';

/**
 * What a queue shard's bundle (`codeloops queue run --shard I/N --export FILE`) says of
 * itself: which queue (`source`: a digest of the tasks and the commit they start from,
 * the same on every shard of one queue file) and which share of it, whether every task
 * of its share finished, and how each ended. It is rewritten as each task ends, so a
 * shard killed midway leaves the bundle of the tasks that finished (`complete` false).
 */
export const bundleQueueSchema = z.object({
  source: z.string(),
  /** Its share of the queue's tasks; null: all of them. */
  shard: z.nullable(shardSchema),
  complete: z.boolean(),
  /** Every task id of the queue file, in its order (the positions shards are dealt by). */
  task_ids: z.array(z.int()),
  /** The tasks of its share, in order, as each stood when the bundle was written. */
  tasks: z.array(
    z.object({
      id: z.int(),
      state: z.enum(TASK_STATES),
      outcome: z.nullable(z.enum(TASK_OUTCOMES)),
      branch: z.string(),
      /** The success's commit, which `queue/branches.bundle` carries on `branch`. */
      commit: z.nullable(z.string()),
      session_ids: z.array(z.string()),
      push: z.nullable(z.object({ remote: z.string(), pushed: z.boolean(), error: z.nullable(z.string()) })),
    }),
  ),
});
export type BundleQueue = z.infer<typeof bundleQueueSchema>;

/** `queue/tasks.json`: the queue file the shard ran (every task), and the records of its share's tasks as its queue holds them. */
export const bundledQueueTasksSchema = z.object({ source: queueExportFileSchema, records: z.array(queueTaskSchema) });
export type BundledQueueTasks = z.infer<typeof bundledQueueTasksSchema>;

export const bundleManifestSchema = z.object({
  format: z.literal('codeloops-sessions'),
  version: z.literal(1),
  created_at: z.string(),
  sessions: z.array(z.object({ id: z.string(), ...placement, snapshot_refs: z.int().check(z.nonnegative()) })),
  groups: z.array(z.object({ id: z.string(), ...placement })),
  /**
   * Snapshot refs whose commits the repository's own history holds (a branch, a tag,
   * HEAD reaches them): git leaves them out of `snapshots.bundle`, so they are listed
   * here, and the clone that imports, which has that history, gets them too.
   */
  history_refs: z.optional(z.array(z.object({ ref: z.string(), oid: z.string() }))),
  /** An eval shard's bundle: its eval record is `eval/record.jsonl`. */
  eval: z.optional(bundleEvalSchema),
  /** A queue shard's bundle: its tasks are `queue/tasks.json`, their success branches `queue/branches.bundle`. */
  queue: z.optional(bundleQueueSchema),
});
export type BundleManifest = z.infer<typeof bundleManifestSchema>;

/** What `codeloops sessions import` did (`--json`). */
export const importResultSchema = z.object({
  sessions: z.array(z.string()),
  groups: z.array(z.string()),
  repository: z.string(),
  snapshot_refs: z.int(),
  warnings: z.array(z.string()),
});
export type ImportResult = z.infer<typeof importResultSchema>;

/** What `codeloops sessions export` wrote (`--json`). */
export const exportResultSchema = z.object({
  file: z.string(),
  sessions: z.array(z.string()),
  groups: z.array(z.string()),
  snapshot_refs: z.int(),
  bytes: z.int(),
  warnings: z.array(z.string()),
});
export type ExportResult = z.infer<typeof exportResultSchema>;

/** `codeloops eval merge --json`: the merged eval's results, as `eval --json` gives them, and each bundle taken. */
export const evalMergeAnswerSchema = z.extend(evalResultsSchema, {
  shards: z.array(
    z.object({
      file: z.string(),
      eval_id: z.string(),
      shard: z.nullable(shardSchema),
      /** Every run of its share had finished when it was exported. */
      complete: z.boolean(),
      /** The runs taken from it (a run an earlier bundle had is not). */
      runs: z.int().check(z.nonnegative()),
    }),
  ),
  warnings: z.array(z.string()),
});
