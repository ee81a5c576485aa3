import {
  criticEvidenceSchema,
  PROTECTED_CHANGE_STATUSES,
  protectedChangeSchema,
  REQUIREMENT_SOURCES,
  requirementStatusSchema,
  VERIFICATIONS,
} from './verification.js';
import {
  AGENT_WAIT_REASONS,
  agentRunOutcomeShape,
  checkOutcomeShape,
  checkTraitsShape,
  doneRefusedShape,
  fileChangeSchema,
  nestedRepositorySchema,
  PHASES,
  roleSchema,
} from './runEvents.js';
import { needsInputSchema } from './needsInput.js';
import { findingSchema } from './reviewRecords.js';
import { CRITIC_DECISIONS, OUTCOMES, sessionHeaderSchema } from './sessionLines.js';
import { TEST_RUNNERS, testCountsSchema, testFindingSchema, verifiedBySchema } from './testResults.js';
import * as z from './zod.js';

/**
 * One step of a session's replay (`codeloops sessions replay --json`, one entry a
 * line): a documented, stable schema, snake_case; new kinds and fields are only
 * added. Built by `replay/timeline.ts`.
 */

const common = {
  /** When it happened (ISO 8601), or null when the record does not say. */
  at: z.nullable(z.string()),
  /** Seconds since the session started, when `at` is known. */
  offset_secs: z.nullable(z.number()),
  iteration: z.nullable(z.int()),
};
const paths = z.array(z.string());
const entry = <K extends string, S extends z.core.$ZodLooseShape>(kind: K, shape: S) => z.object({ ...common, kind: z.literal(kind), ...shape });

export const timelineEntrySchema = z.discriminatedUnion('kind', [
  /** The session's header as its `session_start` line has it. */
  entry('session_started', { ...sessionHeaderSchema.shape, session_id: z.string(), resumed_from: z.nullable(z.string()) }),
  /** A run carried the session on (`codeloops resume` in the same file). */
  entry('resumed', { first_iteration: z.int() }),
  entry('phase', {
    phase: z.enum(PHASES),
    status: z.enum(['started', 'finished']),
    duration_secs: z.nullable(z.number()),
  }),
  entry('tool_call', { role: roleSchema, name: z.string(), input: z.string() }),
  entry('agent_finished', {
    ...agentRunOutcomeShape,
    input_tokens: z.nullable(z.number()),
    output_tokens: z.nullable(z.number()),
    cost_usd: z.nullable(z.number()),
    tool_calls: z.nullable(z.int()),
    /** Events of unknown types and unknown fields in the agent's stream, ignored (null: not recorded). */
    unknown_events: z.nullable(z.int()),
    unknown_fields: z.nullable(z.int()),
  }),
  entry('diff', {
    files_changed: z.int(),
    insertions: z.nullable(z.int()),
    deletions: z.nullable(z.int()),
    files: z.nullable(z.array(fileChangeSchema)),
    /** The recorded diff is the whole change since HEAD, not the iteration's own (the original codeloops recorded it so). */
    since_head: z.boolean(),
  }),
  entry('verdict', {
    decision: z.enum(CRITIC_DECISIONS),
    /** The decision as the session file wrote it, when in other words (the original codeloops: `DONE (confidence: 95%)`); else null. */
    decision_text: z.nullable(z.string()),
    feedback: z.nullable(z.string()),
    summary: z.nullable(z.string()),
    confidence: z.nullable(z.number()),
    remaining_issues: paths,
    /** What the critic ran and read to judge (from the sidecar; absent without one). */
    evidence: z.optional(criticEvidenceSchema),
  }),
  /** `output`: what it printed, head and tail (absent in records of older runners); the user's to read, an acceptance check's too. */
  entry('check', { ...checkOutcomeShape, ...checkTraitsShape, output: z.optional(z.string()), tests: z.optional(testCountsSchema) }),
  /** The start's tests, once, before the first verdict: how many each check's runner passed and failed on the start tree (not the ids). */
  entry('test_baseline', {
    checks: z.array(z.object({ name: z.string(), runner: z.enum(TEST_RUNNERS), passing: z.int(), failing: z.int(), tests: testCountsSchema })),
    unavailable: z.nullable(z.string()),
  }),
  /** The start's tests on a DONE's final code (the oracle): what passed, and each test wanting, accepted or flaky. */
  entry('test_oracle', {
    passed: z.int(),
    baseline: z.int(),
    findings: z.array(testFindingSchema),
    accepted: z.array(z.object({ finding: testFindingSchema, reason: z.nullable(z.string()), by: z.enum(['user', 'allow_test_changes']) })),
    flaky: z.array(z.object({ check: z.string(), id: z.string() })),
  }),
  entry('done_refused', doneRefusedShape),
  /** The task's requirements as the critic judged them on the iteration, each one's evidence checked against the record. */
  entry('requirements', { source: z.enum(REQUIREMENT_SOURCES), requirements: z.array(requirementStatusSchema) }),
  /** A change to a file the gate rests on, standing on the iteration's tree (see `protectedChanges.ts`). */
  entry('protected_change', { change: protectedChangeSchema, status: z.enum(PROTECTED_CHANGE_STATUSES), reason: z.optional(z.nullable(z.string())) }),
  entry('stall', { action: z.enum(['nudge', 'stop']), reason: z.string(), since_iteration: z.int() }),
  /** The loop waited out an agent's usage limit, a rate limit, an overloaded or unreachable API (`agent_waiting`). */
  entry('agent_waiting', { role: roleSchema, agent: z.string(), reason: z.enum(AGENT_WAIT_REASONS), until: z.string() }),
  entry('critic_changes_reverted', { paths }),
  /** Folders that became nested git repositories in this iteration: their files are in no diff. */
  entry('nested_repositories_appeared', { repositories: z.array(nestedRepositorySchema) }),
  entry('warning', { message: z.string() }),
  entry('rollback', { rollback: z.int(), to_iteration: z.int(), restored: paths, removed: paths, overwritten: paths }),
  entry('rollback_undone', { rollback: z.int(), restored: paths, removed: paths, overwritten: paths }),
  /** A candidate's worktree was readied: files copied in, the setup command run (`setup_*` null without one). */
  entry('worktree_prepared', {
    worktree: z.string(),
    copied: paths,
    not_found: paths,
    setup_command: z.nullable(z.string()),
    setup_passed: z.nullable(z.boolean()),
    setup_exit_code: z.nullable(z.int()),
    setup_duration_secs: z.nullable(z.number()),
  }),
  entry('applied', { apply: z.int(), target_dir: z.string(), restored: paths, removed: paths, overwritten: paths }),
  entry('apply_undone', { apply: z.int(), restored: paths, removed: paths, overwritten: paths }),
  entry('imported', { from_working_dir: z.string(), bundle: z.string() }),
  /** One of the critic's findings (`iteration`: the one it is about). */
  entry('finding', { ...findingSchema.shape }),
  /** Findings or comments resolved, by the critic (in its review) or the user; `reopened` when the user opened one again. */
  entry('resolved', { ids: paths, by: z.enum(['critic', 'user']), reopened: z.boolean() }),
  /** The user's comment. */
  entry('comment', { id: z.string(), file: z.nullable(z.string()), line: z.nullable(z.int()), end_line: z.nullable(z.int()), text: z.string() }),
  /** A hunk the user undid in the tree, and why. */
  entry('hunk_rejected', { id: z.string(), hunk: z.int(), file: z.string(), reason: z.nullable(z.string()) }),
  entry('rejection_undone', { id: z.string(), restored: paths }),
  /** Changes put into the user's index (`iteration` null: the whole session's). */
  entry('staged', { files: paths }),
  /** The review items an actor run was told, and those it said it addressed. */
  entry('review_delivered', { ids: paths }),
  entry('review_claimed', { ids: paths }),
  /** The critic or the actor needed the user, and what the user answered (see `needsInput.ts`). */
  entry('needs_input', { ...needsInputSchema.shape }),
  entry('needs_input_answered', { answer: z.string() }),
  /** The loop waited for the user's review (or their answer: `needs_input`), and what they said. */
  entry('review_paused', { needs_input: z.optional(needsInputSchema) }),
  entry('review_resumed', { action: z.enum(['continue', 'stop']), paused_secs: z.number() }),
  entry('session_ended', {
    outcome: z.enum(OUTCOMES),
    iterations: z.int(),
    summary: z.nullable(z.string()),
    confidence: z.nullable(z.number()),
    error: z.nullable(z.string()),
    error_code: z.nullable(z.string()),
    stop_reason: z.nullable(z.string()),
    total_cost_usd: z.nullable(z.number()),
    total_tokens: z.nullable(z.number()),
    duration_secs: z.number(),
    /** For a success: whether anything but the critic's word stood behind it (absent in older records). */
    verification: z.optional(z.enum(VERIFICATIONS)),
    /** For a success: what stood behind it (the start's tests, new tests, exit codes, the critic's commands); absent in older records. */
    verified_by: z.optional(verifiedBySchema),
  }),
]);
export type TimelineEntry = z.infer<typeof timelineEntrySchema>;
export type TimelineKind = TimelineEntry['kind'];
