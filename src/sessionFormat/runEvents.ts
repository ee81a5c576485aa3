import type { DistributiveOmit } from './distributiveOmit.js';
import { agentEventSchema, streamDriftSchema, usageSchema } from './agentEvents.js';
import { FAILURE_CODES, failureSchema, type FailureCode } from './failures.js';
import {
  criticEvidenceSchema,
  PROTECTED_CHANGE_STATUSES,
  protectedChangeSchema,
  REQUIREMENT_SOURCES,
  requirementStatusSchema,
  UNVERIFIED_DONES,
  VERIFICATIONS,
} from './verification.js';
import { needsInputSchema } from './needsInput.js';
import { findingSchema, REVIEW_ACTIONS, REVIEW_MODES } from './reviewRecords.js';
import { CRITIC_DECISIONS, OUTCOMES, sessionHeaderSchema, STOP_REASONS, type SessionEndLine, type StopReason } from './sessionLines.js';
import { TEST_RUNNERS, testCountsSchema, testFindingSchema, verifiedBySchema } from './testResults.js';
import * as z from './zod.js';

/**
 * What a running loop reports as it goes: printed by the CLI, streamed as NDJSON
 * to the editor (`run --events ndjson`), and kept in the session's sidecar record.
 * Validated with zod wherever it crosses a process boundary.
 */

const timestamp = z.string();
const iteration = z.int().check(z.positive());
/** Which agent of the loop. */
export const roleSchema = z.enum(['actor', 'critic']);
const paths = z.array(z.string());

/** Why an agent's run is waited out rather than counted a failure: its usage limit, a rate limit, an overloaded API, an outage. */
export const AGENT_WAIT_REASONS = ['usage_limit', 'rate_limited', 'overloaded', 'outage'] as const;
export type AgentWaitReason = (typeof AGENT_WAIT_REASONS)[number];

/** The steps of an iteration, in order. */
export const PHASES = ['actor', 'diff', 'checks', 'critic', 'critic_repair'] as const;
export type IterationPhase = (typeof PHASES)[number];

export const fileChangeSchema = z.object({
  path: z.string(),
  /** For renames and copies: where it came from. */
  oldPath: z.optional(z.string()),
  status: z.enum(['added', 'modified', 'deleted', 'renamed', 'copied', 'type_changed']),
  /** null for binary files. */
  insertions: z.nullable(z.int()),
  deletions: z.nullable(z.int()),
});
export type FileChange = z.infer<typeof fileChangeSchema>;
export type FileChangeStatus = FileChange['status'];

/**
 * A nested git repository: a folder with a `.git` folder or a `.git` file of its own.
 * git records only the commit it is at, never its files, so what is written in it is
 * in no diff and no snapshot, and a rollback leaves it as it is.
 */
export const nestedRepositorySchema = z.object({
  path: z.string(),
  /** The commit the snapshot records for it; null when it has none yet (git leaves it out altogether). */
  commit: z.nullable(z.string()),
});
export type NestedRepository = z.infer<typeof nestedRepositorySchema>;

/** How a command run for the loop went: one of the project's checks, or a candidate worktree's setup. */
const commandRunShape = {
  command: z.string(),
  passed: z.boolean(),
  /** null when a signal ended it (a timeout, an interrupt). */
  exit_code: z.nullable(z.int()),
  duration_secs: z.number(),
  timed_out: z.boolean(),
};

/** What a command printed: head and tail of its output, and how long it was. */
const commandOutputShape = { output: z.string(), output_chars: z.int() };

/** How one of the project's checks went, as the sidecar, the timeline and the viewers keep it. */
export const checkOutcomeShape = { name: z.string(), required: z.boolean(), ...commandRunShape };

/** How one agent run went, as the sidecar and the timeline keep it. */
export const agentRunOutcomeShape = {
  role: roleSchema,
  exit_code: z.int(),
  duration_secs: z.number(),
  succeeded: z.boolean(),
  failure_reason: z.nullable(z.string()),
  timed_out: z.boolean(),
  interrupted: z.boolean(),
  agent_session_id: z.nullable(z.string()),
};

/**
 * How a check is run, beyond its command (absent in records of older runners: every
 * iteration, shown to the agents, in the tree the actor left).
 */
export const checkTraitsShape = {
  /** `each`: every iteration; `done`: only on a DONE the `each` checks let through. */
  when: z.optional(z.enum(['each', 'done'])),
  /** An acceptance check: the agents were told its name and whether it passed, nothing else. */
  hidden: z.optional(z.boolean()),
  /** Run in a clean worktree of the iteration's snapshot. */
  isolated: z.optional(z.boolean()),
};

/** Why the gate refused a critic's DONE: the `done_refused` event's fields, and its replay entry's. */
export const doneRefusedShape = {
  failed_checks: paths,
  /** The start's tests the final code does not pass (the oracle's findings), by id. */
  failed_tests: z.optional(z.array(z.string())),
  protected_changes: z.optional(z.array(protectedChangeSchema)),
  /** Nothing but the critic's word stood behind it: nothing changed (`no_change`), or nothing verified it under `require_evidence`. */
  unverified: z.optional(z.enum(UNVERIFIED_DONES)),
  /** The requirements unmet or without evidence the record confirms (ids; absent in records of older runners). */
  unmet_requirements: z.optional(paths),
};

/** The guards a run goes with: its checks, its budget, its stall detection. */
export const loopGuardsSchema = z.object({
  checks: z.array(
    z.object({
      name: z.string(),
      command: z.string(),
      required: z.boolean(),
      /** Where it ran, from the repository's top (its codeloops.toml's folder); absent: the working directory. */
      folder: z.optional(z.string()),
      /** How long it may run (absent in records of older runners: the default). */
      timeout_secs: z.optional(z.number()),
      /** The test runner named in the config (`none`: by its exit code alone); absent: recognised from the command. */
      runner: z.optional(z.enum([...TEST_RUNNERS, 'none'])),
      ...checkTraitsShape,
    }),
  ),
  max_cost_usd: z.nullable(z.number()),
  max_tokens: z.nullable(z.number()),
  max_duration_secs: z.nullable(z.number()),
  /** Iterations in a row without progress before a stall (0: off). */
  stall_after: z.int(),
  stall_action: z.enum(['stop', 'nudge']),
  /** Whether it pauses for the user's review (absent in records of older runners: it did not). */
  review: z.optional(z.enum(REVIEW_MODES)),
  /** What the actor may not weaken (`[verify]`); absent: not verified (`--no-verify`, older runners). */
  verify: z.optional(z.object({ protected: z.array(z.string()), allow_test_changes: z.boolean(), require_evidence: z.optional(z.boolean()) })),
});
export type LoopGuards = z.infer<typeof loopGuardsSchema>;

/** What the agents have used so far, against the budget. */
export const spendSchema = z.object({
  total_cost_usd: z.nullable(z.number()),
  total_tokens: z.number(),
  cost_estimated: z.boolean(),
  elapsed_secs: z.number(),
});
export type Spend = z.infer<typeof spendSchema>;

/** How a run ended: `--json-output`, and the `run_finished` event. */
export const runSummarySchema = z.object({
  status: z.enum(OUTCOMES),
  iterations: z.int().check(z.nonnegative()),
  summary: z.nullable(z.string()),
  confidence: z.nullable(z.number()),
  error: z.nullable(z.string()),
  /** Which failure, when `status` is `failed` (see `failures.ts`). */
  error_code: z.nullable(z.enum(FAILURE_CODES)),
  /** The failure's facts, with its `error_code` (a usage limit's `until`); absent when there is no code, and in records of older runners. */
  error_details: z.optional(z.record(z.string(), z.unknown())),
  /** Which guard ended the loop, when one did. */
  stop_reason: z.nullable(z.enum(STOP_REASONS)),
  /** What the agents used, all runs of the session (and the sessions it carries on) together. */
  total_cost_usd: z.nullable(z.number()),
  total_tokens: z.number(),
  cost_estimated: z.boolean(),
  total_duration_secs: z.number(),
  session_id: z.string(),
  session_file: z.string(),
  /** For a success: whether a required check passed on the final tree or the critic ran a command that succeeded on it; null otherwise. */
  verification: z.nullable(z.enum(VERIFICATIONS)),
  /** For a success: what stood behind the DONE; absent from older runners and from other outcomes. */
  verified_by: z.optional(verifiedBySchema),
  /** The failure in the one envelope (`failures.ts`), as the surface that prints the summary fills it: null for any other outcome; absent from the engine and older runners. */
  failure: z.optional(z.nullable(failureSchema)),
});
export type RunSummary = z.infer<typeof runSummarySchema>;

/** How a run ended, read back from its session's `session_end` (for a runner that died before it could say so itself). */
export function runSummaryOfEnd(end: SessionEndLine, sessionId: string, sessionFile: string): RunSummary {
  const code = (FAILURE_CODES as readonly string[]).includes(end.error_code ?? '') ? (end.error_code as FailureCode) : null;
  const stop = (STOP_REASONS as readonly string[]).includes(end.stop_reason ?? '') ? (end.stop_reason as StopReason) : null;
  return {
    status: end.outcome,
    iterations: end.iterations,
    summary: end.summary,
    confidence: end.confidence,
    error: end.error ?? null,
    error_code: code,
    stop_reason: stop,
    total_cost_usd: end.total_cost_usd ?? null,
    total_tokens: end.total_tokens ?? 0,
    cost_estimated: end.cost_estimated ?? false,
    total_duration_secs: end.duration_secs,
    session_id: sessionId,
    session_file: sessionFile,
    verification: end.outcome === 'success' ? (end.verification ?? null) : null,
    ...(end.outcome === 'success' && end.verified_by && { verified_by: end.verified_by }),
  };
}

const event = <T extends string, S extends z.core.$ZodLooseShape>(type: T, shape: S) => z.object({ type: z.literal(type), timestamp, ...shape });

/** A run (or a candidate group) that could not start, and why: a `FailureReport` on the stream. */
export const runRefusedSchema = event('run_refused', {
  /** The failure in the one envelope; `code`, `message` and `details` repeat it for 0.x readers. */
  failure: z.optional(failureSchema),
  code: z.enum(FAILURE_CODES),
  message: z.string(),
  details: z.record(z.string(), z.unknown()),
});
export type RunRefused = z.infer<typeof runRefusedSchema>;

export const runEventSchema = z.discriminatedUnion('type', [
  /** The session's header as its `session_start` line has it, and where the session is. */
  event('run_started', {
    ...sessionHeaderSchema.shape,
    session_id: z.string(),
    session_file: z.string(),
    /** Set when this run continues an earlier session: its first iteration's number. */
    first_iteration: z.optional(iteration),
    /** The checks, budget and stall detection it runs with (absent in records of older runners). */
    guards: z.optional(loopGuardsSchema),
  }),
  /**
   * The run could not start: nothing was run and no session written. Only on the
   * NDJSON stream (there is no session to keep it in).
   */
  runRefusedSchema,
  event('iteration_started', { iteration }),
  event('phase', {
    iteration,
    phase: z.enum(PHASES),
    status: z.enum(['started', 'finished']),
    duration_secs: z.optional(z.number()),
  }),
  event('agent_event', { iteration, role: roleSchema, event: agentEventSchema }),
  event('agent_finished', {
    iteration,
    ...agentRunOutcomeShape,
    usage: z.nullable(usageSchema),
    tool_calls: z.int(),
    /**
     * Events of unknown types and unknown fields in the agent's stream (its CLI is
     * newer or older than the versions its adapter knows): ignored, counted here.
     * Absent in records of older runners.
     */
    drift: z.optional(streamDriftSchema),
  }),
  event('snapshot', { iteration, label: z.enum(['pre', 'post', 'critic', 'checks']), commit: z.string(), ref: z.nullable(z.string()) }),
  event('diff_captured', {
    iteration,
    files_changed: z.int(),
    insertions: z.int(),
    deletions: z.int(),
    files: z.array(fileChangeSchema),
    truncated: z.boolean(),
  }),
  event('critic_decision', {
    iteration,
    decision: z.enum(CRITIC_DECISIONS),
    feedback: z.nullable(z.string()),
    summary: z.nullable(z.string()),
    confidence: z.nullable(z.number()),
    remaining_issues: paths,
    /** `actor_asked`: the actor asked the user (`needs_input`), and the critic did not run. */
    source: z.enum(['block', 'marker', 'repair', 'unreadable', 'critic_failed', 'actor_asked']),
    /** The critic's own words (head and tail), kept out of the session file. */
    critic_output: z.string(),
    /** Its findings on this iteration's code, checked against the tree (absent in records of older runners). */
    findings: z.optional(z.array(findingSchema)),
    /** Earlier findings and user comments it resolved (ids). */
    resolved: z.optional(z.array(z.string())),
    /** What it ran and read to judge, from its stream (absent in records of older runners). */
    evidence: z.optional(criticEvidenceSchema),
    /** On a CONTINUE: the critic (`blocked`) or the actor cannot go on without the user (see `needsInput.ts`). */
    needs_input: z.optional(needsInputSchema),
  }),
  /** The critic or the actor needs the user: the loop waits for their answer, or ends when nobody can give one. */
  event('needs_input', { iteration, ...needsInputSchema.shape }),
  /** The user answered the question of `iteration`: the next actor is given it as their words. */
  event('needs_input_answered', { iteration, answer: z.string() }),
  /** One of the project's checks ran on the iteration's tree (`tree`: the snapshot's tree id). */
  event('check_finished', {
    iteration,
    ...checkOutcomeShape,
    ...commandOutputShape,
    tree: z.string(),
    ...checkTraitsShape,
    /** Its runner's counts, from the runner's own report; absent: it counts by its exit code alone. */
    tests: z.optional(testCountsSchema),
  }),
  /**
   * The start's tests, once, beside the first actor run: each required check whose
   * runner is known, run on the start tree in a worktree of its own; the ids that passed
   * and those that failed (the task's to fix) are what the oracle holds the final code to. `unavailable` says why there is no
   * baseline (no such check), and the DONE then rests on exit codes.
   */
  event('test_baseline', {
    checks: z.array(
      z.object({ name: z.string(), runner: z.enum(TEST_RUNNERS), passing: z.array(z.string()), failing: z.array(z.string()), tests: testCountsSchema }),
    ),
    unavailable: z.nullable(z.string()),
  }),
  /**
   * The oracle at a DONE: the start's tests run on the final code (the tree `tree`, the
   * paths `restored` put back as at the start), each baseline test that did not pass a
   * finding; flaky ones (failing on the start tree too when run again) left out.
   */
  event('test_oracle', {
    iteration,
    tree: z.string(),
    restored: paths,
    passed: z.int(),
    baseline: z.int(),
    findings: z.array(testFindingSchema),
    /** Findings the user accepted (`codeloops accept --test`) or `allow_test_changes` let stand: they refuse nothing. */
    accepted: z.array(z.object({ finding: testFindingSchema, reason: z.nullable(z.string()), by: z.enum(['user', 'allow_test_changes']) })),
    flaky: z.array(z.object({ check: z.string(), id: z.string() })),
  }),
  /** The gate refused the critic's DONE: required checks failed on this tree, or a protected change stands. */
  event('done_refused', { iteration, ...doneRefusedShape }),
  /**
   * The task's requirements as the critic judged them on this iteration, each one's
   * evidence checked against the record (see `verification.ts`): from the task's own
   * list, or the critic's first decision.
   */
  event('requirements', { iteration, source: z.enum(REQUIREMENT_SOURCES), requirements: z.array(requirementStatusSchema) }),
  /**
   * A change the actor made to a file the gate rests on (a test, what a check runs, CI,
   * codeloops.toml), judged against the tree the loop started from: one event for each
   * that stands on the iteration's tree. `weakening` refuses DONE; `accepted` by the
   * user (`reason`), or `allowed` by `allow_test_changes`, does not.
   */
  event('protected_change', {
    iteration,
    change: protectedChangeSchema,
    status: z.enum(PROTECTED_CHANGE_STATUSES),
    /** The user's reason, when they accepted it. */
    reason: z.optional(z.nullable(z.string())),
  }),
  /** What the agents have used so far (sent as it changes, at most about once a second, and after each agent run). */
  event('spend', { ...spendSchema.shape }),
  /**
   * An agent's run failed for a reason outside its work (`reason`): the loop waits
   * until `until`, then runs the same iteration's agent again (`[limits]`).
   * `agent` is the agent's display name (`Claude Code`). `tries`: how many times the
   * agent was refused in this wait so far (1: the wait begins; absent in records of
   * older runners), so that a wait is told once, not at every refusal.
   */
  event('agent_waiting', {
    iteration,
    role: roleSchema,
    agent: z.string(),
    reason: z.enum(AGENT_WAIT_REASONS),
    until: timestamp,
    tries: z.optional(z.int().check(z.positive())),
  }),
  /** The loop is going in circles: the actor is told so (`nudge`) or the loop ends (`stop`). */
  event('stall', { iteration, action: z.enum(['nudge', 'stop']), reason: z.string(), since_iteration: iteration }),
  event('critic_changes_reverted', { iteration, paths }),
  /** Folders that became nested repositories in this iteration (since the loop began, none was one): the critic is told. */
  event('nested_repositories_appeared', { iteration, repositories: z.array(nestedRepositorySchema) }),
  /** The review items (`F…` findings, `U…` comments, `R…` rejected hunks) put in this iteration's actor prompt. */
  event('review_delivered', { iteration, ids: paths }),
  /** The review items the actor says it addressed (its `Addressed:` line): the critic is asked to confirm. */
  event('review_claimed', { iteration, ids: paths }),
  /** The loop waits for the user after a CONTINUE (`review = "pause"`), or for their answer (`needs_input`: what was asked). */
  event('review_paused', { iteration, needs_input: z.optional(needsInputSchema) }),
  /** The user said to go on, or to stop. */
  event('review_resumed', { iteration, action: z.enum(REVIEW_ACTIONS), paused_secs: z.number() }),
  event('iteration_finished', { iteration, decision: z.enum(CRITIC_DECISIONS) }),
  event('warning', { message: z.string() }),
  /** The tree was put back to how it was before `to_iteration` (`codeloops rollback`). */
  event('rollback', {
    rollback: z.int().check(z.positive()),
    to_iteration: iteration,
    restored: paths,
    removed: paths,
    /** Paths the user had changed since the loop, replaced on the user's say (kept in the undo snapshot). */
    overwritten: paths,
    before_ref: z.string(),
  }),
  /** A rollback was undone. */
  event('rollback_undone', { rollback: z.int().check(z.positive()), restored: paths, removed: paths, overwritten: paths }),
  /** A candidate's worktree was readied before its first iteration: files copied in from the user's tree, the setup command run. */
  event('worktree_prepared', {
    worktree: z.string(),
    /** `[worktree] copy` entries copied in, and those the user's tree does not have. */
    copied: paths,
    not_found: paths,
    setup: z.nullable(z.object({ ...commandRunShape, ...commandOutputShape })),
  }),
  /** The session's changes were put into a working tree (`codeloops apply`); `before_ref` keeps that tree as it was. */
  event('applied', {
    apply: z.int().check(z.positive()),
    target_dir: z.string(),
    restored: paths,
    removed: paths,
    overwritten: paths,
    before_ref: z.string(),
  }),
  /** An apply was undone. */
  event('apply_undone', { apply: z.int().check(z.positive()), restored: paths, removed: paths, overwritten: paths }),
  /** The session came from a bundle (`codeloops sessions import`); it ran in `from_working_dir` on another machine or clone. */
  event('imported', { from_working_dir: z.string(), bundle: z.string() }),
  z.extend(runSummarySchema, { type: z.literal('run_finished'), timestamp }),
]);

export type RunEvent = z.infer<typeof runEventSchema>;
export type RunEventType = RunEvent['type'];
export type RunEventOf<T extends RunEventType> = Extract<RunEvent, { type: T }>;

/** An event as emitted, before it is stamped with a time. */
export type RunEventInput = DistributiveOmit<RunEvent, 'timestamp'>;

export type RunEventListener = (event: RunEvent) => void;

/** Whether an `agent_waiting` begins a wait, rather than going on with one after the agent was refused again: a user is told of a wait once. */
export function beginsWait(event: RunEventOf<'agent_waiting'>): boolean {
  return (event.tries ?? 1) <= 1;
}

/** An event with the time it happened. */
export function stampEvent(input: RunEventInput, at: Date = new Date()): RunEvent {
  return { ...input, timestamp: at.toISOString() } as RunEvent;
}

/** One line of a run event stream or record, or undefined for anything else (a stray print, an event of a newer runner). */
export function parseRunEvent(line: string): RunEvent | undefined {
  if (line.trim() === '') return undefined;
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = runEventSchema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}
