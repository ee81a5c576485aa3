import { z } from 'zod';
import { agentEventSchema, usageSchema } from '../agents/agentEvents.js';
import { CRITIC_DECISIONS, OUTCOMES } from '../sessionFormat/sessionLines.js';

/**
 * What a running loop reports as it goes: printed by the CLI, streamed as NDJSON
 * to the editor (`run --events ndjson`), and kept in the session's sidecar record.
 * Validated with zod wherever it crosses a process boundary.
 */

const base = { timestamp: z.string() };
const iteration = z.number().int().positive();
const role = z.enum(['actor', 'critic']);

export const fileChangeSchema = z.object({
  path: z.string(),
  oldPath: z.string().optional(),
  status: z.enum(['added', 'modified', 'deleted', 'renamed', 'copied', 'type_changed']),
  insertions: z.number().int().nullable(),
  deletions: z.number().int().nullable(),
});

export const runSummarySchema = z.object({
  status: z.enum(OUTCOMES),
  iterations: z.number().int().nonnegative(),
  summary: z.string().nullable(),
  confidence: z.number().nullable(),
  error: z.string().nullable(),
  total_duration_secs: z.number(),
  session_id: z.string(),
  session_file: z.string(),
});
export type RunSummary = z.infer<typeof runSummarySchema>;

export const runEventSchema = z.discriminatedUnion('type', [
  z.object({
    ...base,
    type: z.literal('run_started'),
    session_id: z.string(),
    session_file: z.string(),
    prompt: z.string(),
    working_dir: z.string(),
    actor_agent: z.string(),
    critic_agent: z.string(),
    actor_model: z.string().nullable(),
    critic_model: z.string().nullable(),
    max_iterations: z.number().int().nullable(),
    /** Set when this run continues an earlier session. */
    resumed_from: z.string().optional(),
    first_iteration: z.number().int().positive().optional(),
  }),
  z.object({ ...base, type: z.literal('iteration_started'), iteration }),
  z.object({
    ...base,
    type: z.literal('phase'),
    iteration,
    phase: z.enum(['actor', 'diff', 'critic', 'critic_repair']),
    status: z.enum(['started', 'finished']),
    duration_secs: z.number().optional(),
  }),
  z.object({ ...base, type: z.literal('agent_event'), iteration, role, event: agentEventSchema }),
  z.object({
    ...base,
    type: z.literal('agent_finished'),
    iteration,
    role,
    exit_code: z.number().int(),
    duration_secs: z.number(),
    succeeded: z.boolean(),
    failure_reason: z.string().nullable(),
    timed_out: z.boolean(),
    interrupted: z.boolean(),
    agent_session_id: z.string().nullable(),
    usage: usageSchema.nullable(),
    tool_calls: z.number().int(),
  }),
  z.object({
    ...base,
    type: z.literal('snapshot'),
    iteration,
    label: z.enum(['pre', 'post', 'critic']),
    commit: z.string(),
    ref: z.string().nullable(),
  }),
  z.object({
    ...base,
    type: z.literal('diff_captured'),
    iteration,
    files_changed: z.number().int(),
    insertions: z.number().int(),
    deletions: z.number().int(),
    files: z.array(fileChangeSchema),
    truncated: z.boolean(),
  }),
  z.object({
    ...base,
    type: z.literal('critic_decision'),
    iteration,
    decision: z.enum(CRITIC_DECISIONS),
    feedback: z.string().nullable(),
    summary: z.string().nullable(),
    confidence: z.number().nullable(),
    remaining_issues: z.array(z.string()),
    source: z.enum(['block', 'marker', 'repair', 'unreadable', 'critic_failed']),
    /** The critic's own words (head and tail), kept out of the session file. */
    critic_output: z.string(),
  }),
  z.object({ ...base, type: z.literal('critic_changes_reverted'), iteration, paths: z.array(z.string()) }),
  z.object({ ...base, type: z.literal('iteration_finished'), iteration, decision: z.enum(CRITIC_DECISIONS) }),
  z.object({ ...base, type: z.literal('warning'), message: z.string() }),
  /** The tree was put back to how it was before `to_iteration` (`codeloops rollback`). */
  z.object({
    ...base,
    type: z.literal('rollback'),
    rollback: z.number().int().positive(),
    to_iteration: iteration,
    restored: z.array(z.string()),
    removed: z.array(z.string()),
    /** Paths the user had changed since the loop, replaced because of --force (kept in the undo snapshot). */
    overwritten: z.array(z.string()),
    before_ref: z.string(),
  }),
  /** A rollback was undone (`codeloops rollback --undo`). */
  z.object({
    ...base,
    type: z.literal('rollback_undone'),
    rollback: z.number().int().positive(),
    restored: z.array(z.string()),
    removed: z.array(z.string()),
    overwritten: z.array(z.string()),
  }),
  z.object({ ...base, type: z.literal('run_finished'), ...runSummarySchema.shape }),
]);

export type RunEvent = z.infer<typeof runEventSchema>;
export type RunEventType = RunEvent['type'];

/** Distributes a union over its members so each keeps its own fields. */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event as emitted, before it is stamped with a time. */
export type RunEventInput = DistributiveOmit<RunEvent, 'timestamp'>;

export type RunEventListener = (event: RunEvent) => void;
