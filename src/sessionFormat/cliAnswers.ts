import { failureSchema, type Failure } from './failures.js';
import { queueTaskSchema, TASK_OUTCOMES } from './queueRecords.js';
import { shardSchema } from './shards.js';
import { runSummarySchema, type RunSummary } from './runEvents.js';
import { acceptedChangeSchema } from './verification.js';
import * as z from './zod.js';

/**
 * The CLI's machine-readable answers that have no record of their own to live with (a
 * run's outcome, the queue's answers…; the dry-run plans are in `runPlans.ts`). Which
 * command answers which is `CLI_ANSWERS` (`cliAnswerIndex.ts`); the CLI prints through
 * it and every reader parses with the schema it names (`readCliAnswer`,
 * `cliAnswerReading.ts`), so a change of shape is a type error on both sides, never a
 * silent cast. Each kept apart so that a reader (the editor's bundle) loads only the
 * schemas it reads.
 */

/** How a run ended (`run`/`resume --json-output`): its summary, and its failure in the envelope (null for any other outcome). */
export const runOutcomeSchema = z.extend(runSummarySchema, { failure: z.nullable(failureSchema) });
export type RunOutcome = z.infer<typeof runOutcomeSchema>;

/** A run's summary as `--json-output` prints it: its failure, when it failed with a code, in the envelope with the surface's hint. */
export function runOutcomeOf(summary: RunSummary, hintOf: (failure: Omit<Failure, 'hint'>) => string | null): RunOutcome {
  if (summary.status !== 'failed' || !summary.error_code) return { ...summary, failure: null };
  const failure = { code: summary.error_code, message: summary.error ?? '', details: { ...summary.error_details, session_id: summary.session_id } };
  return { ...summary, failure: { ...failure, hint: hintOf(failure) } };
}

/** `candidates <group> --discard --json`: the worktrees removed, the changes saved, the worktrees kept and why. */
export const worktreesRemovedSchema = z.object({
  removed: z.array(z.string()),
  saved: z.array(z.object({ label: z.string(), ref: z.string() })),
  kept: z.array(z.object({ label: z.string(), reason: z.string() })),
});

/** `accept --json` (a protected change with `--file`, a start test with `--test`), and its `--undo`. */
export const acceptAnswerSchema = z.object({
  session_id: z.string(),
  file: z.optional(z.string()),
  test: z.optional(z.string()),
  result: z.enum(['accepted', 'acceptance_undone', 'nothing_to_do']),
  iteration: z.optional(z.int()),
  kinds: z.optional(acceptedChangeSchema.shape.kinds),
  reason: z.optional(z.nullable(z.string())),
});

/** `queue add --json`: the tasks added, in order. */
export const queueAddAnswerSchema = z.object({ added: z.array(queueTaskSchema) });

/** `queue remove --json`: the task removed (its branch and sessions stay). */
export const queueRemoveAnswerSchema = z.object({ removed: queueTaskSchema });

/** `queue move --json`: where the task is now (1: first). */
export const queueMoveAnswerSchema = z.object({ id: z.int(), position: z.int() });

/** `queue export --json`: where the queue file was written, the tasks in it (in order) and the commit their branches start from. */
export const queueExportAnswerSchema = z.object({ file: z.string(), tasks: z.array(z.int()), base_commit: z.nullable(z.string()) });

/**
 * `queue import --json`: the shards taken (each once), the tasks whose outcomes were
 * recorded here, those recorded from these bundles before, those of the given shards
 * that did not finish (`--partial`) and those of shards not given (`missing`, with their
 * shard), the tasks queued here for want of an outcome, the branches and sessions made.
 */
export const queueImportAnswerSchema = z.object({
  repository: z.string(),
  shards: z.array(z.object({ file: z.string(), shard: z.nullable(shardSchema), complete: z.boolean() })),
  imported: z.array(
    z.object({ id: z.int(), outcome: z.enum(TASK_OUTCOMES), branch: z.string(), commit: z.nullable(z.string()), sessions: z.array(z.string()) }),
  ),
  already_imported: z.array(z.int()),
  unfinished: z.array(z.int()),
  missing: z.array(z.object({ id: z.int(), shard: z.string() })),
  queued: z.array(z.int()),
  branches: z.array(z.string()),
  sessions: z.array(z.string()),
  warnings: z.array(z.string()),
});
export type QueueImportAnswer = z.infer<typeof queueImportAnswerSchema>;

/** `queue list --json`: the queue as its file has it, where that file is, and the pid of the `queue run` running it. */
export const queueListAnswerSchema = z.object({
  repository: z.string(),
  file: z.string(),
  base_commit: z.nullable(z.string()),
  running_pid: z.nullable(z.int()),
  tasks: z.array(queueTaskSchema),
});
export type QueueListAnswer = z.infer<typeof queueListAnswerSchema>;
