import path from 'node:path';
import { FAILURE_CODES } from './failures.js';
import { dataHome, fileTimestamp, promptHash, type Environment } from './sessionFiles.js';
import { OUTCOMES } from './sessionLines.js';
import { shardSchema } from './shards.js';
import { verifiedBySchema } from './testResults.js';
import * as z from './zod.js';

/**
 * Evals (`codeloops eval SUITE.toml`): every (task, config, repetition) of a suite is
 * one loop, a normal session tagged with `eval` in its `session_start`; after it, the
 * task's acceptance command says whether the work is really done. An eval's record is
 * one append-only JSON Lines file, `evals/<eval_id>.jsonl` beside the sessions: its
 * plan (the suite as it was read, each task's ref resolved to a commit), each run as it
 * started and finished, and how each process running it ended. `--resume` reads it
 * back and runs only what has not finished; the results are computed from it.
 */

/** A run's outcome: the loop's word (success or not) against the hidden acceptance's (passed or not). */
export const EVAL_OUTCOMES = ['accepted', 'false_done', 'false_continue', 'failed'] as const;
export type EvalOutcome = (typeof EVAL_OUTCOMES)[number];

export function evalOutcomeOf(loopSucceeded: boolean, acceptancePassed: boolean): EvalOutcome {
  if (loopSucceeded) return acceptancePassed ? 'accepted' : 'false_done';
  return acceptancePassed ? 'false_continue' : 'failed';
}

/** `$XDG_DATA_HOME/codeloops/evals`: one `<eval_id>.jsonl` per eval. */
export function evalsDir(env: Environment = process.env): string {
  return path.join(dataHome(env), 'codeloops', 'evals');
}

/** `eval-2025-01-27T15-30-45Z_a3f2c1`: never a session's or a group's id, sorted by time like them. */
export function evalIdFor(date: Date, suiteName: string): string {
  return `eval-${fileTimestamp(date)}_${promptHash(suiteName)}`;
}

export function isEvalId(value: string): boolean {
  return /^eval-[0-9TZ-]+_[0-9a-f]{6}$/.test(value);
}

export function evalFileOf(evalId: string, env: Environment = process.env): string {
  return path.join(evalsDir(env), `${evalId}.jsonl`);
}

const timestamp = z.string();
const repetition = z.int().check(z.positive());

/** A task as the eval runs it: its prompt's text, its repository's top folder, its ref and the commit that ref named when the eval started. */
export const evalTaskSchema = z.object({
  name: z.string(),
  prompt: z.string(),
  repository: z.string(),
  ref: z.string(),
  commit: z.string(),
  setup: z.nullable(z.string()),
  acceptance: z.string(),
});
export type EvalTask = z.infer<typeof evalTaskSchema>;

/** A config as the suite gives it: its name and its table, checked again by the config's schema when a resumed eval reads it back. */
export const evalConfigRecordSchema = z.object({ name: z.string(), table: z.record(z.string(), z.unknown()) });
export type EvalConfigRecord = z.infer<typeof evalConfigRecordSchema>;

const runKey = { task: z.string(), config: z.string(), repetition };
export const runKeySchema = z.object(runKey);

/** One run as `--json` reports it. */
export const evalRunSchema = z.object({
  ...runKey,
  session_id: z.nullable(z.string()),
  outcome: z.enum(EVAL_OUTCOMES),
  acceptance_passed: z.boolean(),
  iterations: z.int().check(z.nonnegative()),
  cost_usd: z.nullable(z.number()),
  duration_secs: z.number(),
  /** What the loop's DONE rested on (a success's `verified_by`); null for other outcomes and records of older runners. */
  verified_by: z.optional(z.nullable(verifiedBySchema)),
});
export type EvalRun = z.infer<typeof evalRunSchema>;

const line = <T extends string, S extends z.core.$ZodLooseShape>(type: T, shape: S) => z.object({ type: z.literal(type), timestamp, ...shape });

export const evalRecordLineSchema = z.discriminatedUnion('type', [
  line('eval_started', {
    eval_id: z.string(),
    /** The suite's `name`. */
    suite: z.string(),
    suite_file: z.string(),
    repetitions: repetition,
    jobs: z.int().check(z.positive()),
    tasks: z.array(evalTaskSchema),
    configs: z.array(evalConfigRecordSchema),
    pid: z.int(),
    /** `--shard I/N`: this record's process runs only that share of the runs (absent: all of them). */
    shard: z.optional(z.nullable(shardSchema)),
  }),
  /**
   * `codeloops eval merge`: this eval was made here from shards' bundles, each run of
   * theirs taken once; the runs no bundle had are `missing` (`--resume` runs them).
   */
  line('eval_merged', {
    bundles: z.array(z.object({ file: z.string(), eval_id: z.string(), shard: z.nullable(shardSchema), complete: z.boolean() })),
    missing: z.array(runKeySchema),
  }),
  /** `codeloops eval --resume`: another process carries the eval on. */
  line('eval_resumed', { jobs: z.int().check(z.positive()), pid: z.int() }),
  /** A run's loop has its session. */
  line('run_started', { ...runKey, session_id: z.string() }),
  /** A run ended and its acceptance ran: it is not run again. */
  line('run_finished', {
    ...evalRunSchema.shape,
    /** How the loop ended (`success` or not is half the outcome). */
    loop_outcome: z.enum(OUTCOMES),
    error: z.nullable(z.string()),
    error_code: z.nullable(z.enum(FAILURE_CODES)),
    /** The acceptance command's exit code (null: it timed out, was killed or could not start) and the end of its output: the user's to read, never an agent's. */
    acceptance_exit_code: z.nullable(z.int()),
    acceptance_output: z.string(),
  }),
  /** A process running the eval stopped: every run finished, or it was interrupted (the rest waits for `--resume`). */
  line('eval_stopped', { status: z.enum(['finished', 'interrupted', 'failed']) }),
]);
export type EvalRecordLine = z.infer<typeof evalRecordLineSchema>;
export type EvalRecordLineOf<T extends EvalRecordLine['type']> = Extract<EvalRecordLine, { type: T }>;
/** What a writer gives for a line: everything but its time. */
export type EvalRecordInput = EvalRecordLine extends infer L ? (L extends EvalRecordLine ? Omit<L, 'timestamp'> : never) : never;

const interval = z.nullable(z.tuple([z.number(), z.number()]));

/** `codeloops eval --json`: the suite's configs compared, exactly the fields the README documents. */
export const evalResultsSchema = z.object({
  eval_id: z.string(),
  suite: z.string(),
  configs: z.array(
    z.object({
      name: z.string(),
      runs: z.int().check(z.nonnegative()),
      success_rate: z.nullable(z.number()),
      accepted_rate: z.nullable(z.number()),
      /** Wilson's 95 % interval of `accepted_rate`. */
      accepted_rate_interval: interval,
      /** Of the runs whose loop ended `success`, the share whose acceptance failed. */
      false_done_rate: z.nullable(z.number()),
      /** Of the runs whose loop did not end `success`, the share whose acceptance passed. */
      false_continue_rate: z.nullable(z.number()),
      mean_iterations: z.nullable(z.number()),
      total_cost_usd: z.nullable(z.number()),
      cost_per_accepted_task_usd: z.nullable(z.number()),
      mean_duration_secs: z.nullable(z.number()),
    }),
  ),
  pairs: z.array(
    z.object({
      a: z.string(),
      b: z.string(),
      /** `accepted_rate` of a minus that of b. */
      accepted_rate_difference: z.nullable(z.number()),
      /** Newcombe's 95 % interval of the difference (from Wilson's). */
      interval,
    }),
  ),
  runs: z.array(evalRunSchema),
  /** The share of the runs these results are of (`--shard`); null: the whole eval. */
  shard: z.nullable(shardSchema),
  /** Every run (of the shard's share) finished; false: `missing_runs` are not counted in the figures. */
  complete: z.boolean(),
  missing_runs: z.array(runKeySchema),
});
export type EvalResults = z.infer<typeof evalResultsSchema>;
export type EvalConfigResult = EvalResults['configs'][number];

/** `codeloops eval SUITE --dry-run --json`: the runs this process would run (its shard's), where its shard came from, and the commits. */
export const evalDryRunSchema = z.object({
  suite: z.string(),
  shard: z.nullable(shardSchema),
  /** `--shard`, `JOB_COMPLETION_INDEX`, `CI_NODE_INDEX`, or the eval's record (`--resume`); null without a shard. */
  shard_source: z.nullable(z.string()),
  tasks: z.array(z.object({ name: z.string(), repository: z.string(), ref: z.string(), commit: z.string() })),
  runs: z.array(z.object({ number: z.int().check(z.positive()), ...runKey })),
  /** The eval's runs, every shard's. */
  total_runs: z.int().check(z.nonnegative()),
});
