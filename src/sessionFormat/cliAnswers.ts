import { applyOutcomeSchema } from './applyOutcome.js';
import { groupComparisonSchema } from './candidateGroups.js';
import { doctorReportSchema } from './doctorReport.js';
import { evalResultsSchema } from './evalRecords.js';
import { failureAnswerSchema, failureSchema, type Failure } from './failures.js';
import { forecastSchema } from './forecast.js';
import { mergeResultSchema, queueTaskSchema } from './queueRecords.js';
import { reviewActionOutcomeSchema, reviewRecordSchema, sessionReviewSchema } from './reviewRecords.js';
import { rollbackOutcomeSchema } from './rollbackOutcome.js';
import { runSummarySchema, type RunSummary } from './runEvents.js';
import { exportResultSchema, importResultSchema } from './sessionBundle.js';
import { iterationLineSchema, sessionEndLineSchema, sessionStartLineSchema } from './sessionLines.js';
import { sessionStatsSchema, sessionSummarySchema } from './sessionSummaries.js';
import { timelineEntrySchema } from './timelineEntries.js';
import { acceptedChangeSchema } from './verification.js';
import * as z from './zod.js';

/**
 * The CLI's machine-readable answers, declared once: what each command prints on
 * stdout with `--json` (or `--json-output`), and the one failure envelope they all
 * print when they fail. The CLI writes through `CLI_ANSWERS` (`cli/answers.ts`), and
 * every reader (the editor's runner client, the MCP server, the tests) parses through
 * it, so a change of shape is a type error on both sides, never a silent cast. The
 * run events of `--events ndjson` are declared in `runEvents.ts` (and a candidate
 * group's in `candidateGroups.ts`); records on disk in their own modules.
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

/**
 * A run refused before it started (`--json-output`, `--dry-run` too): no session was
 * written; a reader takes it as the failure it carries. The flat
 * `error`, `error_code` and `error_details` repeat the envelope for scripts of 0.x.
 */
export const runRefusedOutcomeSchema = z.object({
  status: z.literal('failed'),
  iterations: z.literal(0),
  summary: z.null(),
  confidence: z.null(),
  failure: failureSchema,
  error: z.string(),
  error_code: failureSchema.shape.code,
  error_details: z.record(z.string(), z.unknown()),
  total_duration_secs: z.literal(0),
  session_id: z.null(),
  session_file: z.null(),
});

/** A refused run as `--json-output` prints it: the envelope, and its flat 0.x fields. */
export function formatRefusedRun(failure: Failure): string {
  const refused: z.input<typeof runRefusedOutcomeSchema> = {
    status: 'failed',
    iterations: 0,
    summary: null,
    confidence: null,
    failure,
    error: failure.message,
    error_code: failure.code,
    error_details: failure.details,
    total_duration_secs: 0,
    session_id: null,
    session_file: null,
  };
  return `${JSON.stringify(refused)}\n`;
}

/** An agent as a plan shows it: which, its model, the program that runs it, its timeout. */
const plannedAgentSchema = z.object({ agent: z.string(), model: z.nullable(z.string()), program: z.string(), timeout_secs: z.number() });
export type PlannedAgent = z.infer<typeof plannedAgentSchema>;

const planOpeningShape = { working_dir: z.string(), repository: z.string(), prompt: z.string() };

/** `run --dry-run --json-output`: what one loop would do; nothing is started. */
export const runPlanSchema = z.object({
  ...planOpeningShape,
  max_iterations: z.nullable(z.int()),
  actor: plannedAgentSchema,
  critic: plannedAgentSchema,
  checks: z.array(
    z.object({
      name: z.string(),
      run: z.string(),
      required: z.boolean(),
      timeout_secs: z.nullable(z.number()),
      working_dir: z.string(),
      /** `each` iteration, or at `done` only. */
      when: z.string(),
      hidden: z.boolean(),
      isolated: z.boolean(),
    }),
  ),
  max_cost_usd: z.nullable(z.number()),
  max_tokens: z.nullable(z.number()),
  max_duration_secs: z.nullable(z.number()),
  forecast: forecastSchema,
  suggested_max_cost_usd: z.nullable(z.number()),
  stall: z.object({ unchanged_iterations: z.int(), action: z.string() }),
  review: z.string(),
  verify: z.nullable(z.object({ protected: z.array(z.string()), allow_test_changes: z.boolean(), require_evidence: z.boolean() })),
  sessions_dir: z.string(),
  config_files: z.array(z.string()),
});
export type RunPlan = z.infer<typeof runPlanSchema>;

/** `run --candidates … --dry-run --json-output`: what a candidate group would do. */
export const groupPlanSchema = z.object({
  ...planOpeningShape,
  candidates: z.array(z.object({ label: z.string(), actor: plannedAgentSchema })),
  critic: plannedAgentSchema,
  jobs: z.int(),
  judge: z.boolean(),
  worktrees_dir: z.string(),
  copy: z.array(z.string()),
  setup: z.nullable(z.string()),
  max_iterations: z.nullable(z.int()),
  checks: z.array(z.object({ name: z.string(), run: z.string(), required: z.boolean() })),
});
export type GroupPlan = z.infer<typeof groupPlanSchema>;

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

/** `queue list --json`: the queue as its file has it, where that file is, and the pid of the `queue run` running it. */
export const queueListAnswerSchema = z.object({
  repository: z.string(),
  file: z.string(),
  base_commit: z.nullable(z.string()),
  running_pid: z.nullable(z.int()),
  tasks: z.array(queueTaskSchema),
});
export type QueueListAnswer = z.infer<typeof queueListAnswerSchema>;

/**
 * Each command's answer, by the words that run it. `lines`: one JSON value on one line,
 * `indented` (for reading), or `ndjson` (a value a line, as it comes).
 */
export const CLI_ANSWERS = {
  run: { schema: runOutcomeSchema, layout: 'line' },
  resume: { schema: runOutcomeSchema, layout: 'line' },
  'run --dry-run': { schema: runPlanSchema, layout: 'indented' },
  'run --candidates --dry-run': { schema: groupPlanSchema, layout: 'indented' },
  'run --candidates': { schema: groupComparisonSchema, layout: 'line' },
  forecast: { schema: forecastSchema, layout: 'line' },
  doctor: { schema: doctorReportSchema, layout: 'indented' },
  'sessions list': { schema: z.array(sessionSummarySchema), layout: 'line' },
  'sessions show': {
    schema: z.object({ id: z.string(), start: sessionStartLineSchema, iterations: z.array(iterationLineSchema), end: z.nullable(sessionEndLineSchema) }),
    layout: 'indented',
  },
  'sessions stats': { schema: sessionStatsSchema, layout: 'indented' },
  'sessions replay': { schema: timelineEntrySchema, layout: 'ndjson' },
  'sessions delete': { schema: z.object({ session_id: z.string(), snapshot_refs: z.int(), warnings: z.array(z.string()) }), layout: 'indented' },
  'sessions export': { schema: exportResultSchema, layout: 'indented' },
  'sessions import': { schema: importResultSchema, layout: 'indented' },
  rollback: { schema: rollbackOutcomeSchema, layout: 'indented' },
  apply: { schema: applyOutcomeSchema, layout: 'indented' },
  eval: { schema: evalResultsSchema, layout: 'line' },
  candidates: { schema: z.array(groupComparisonSchema), layout: 'indented' },
  'candidates <group>': { schema: groupComparisonSchema, layout: 'indented' },
  'candidates --discard': { schema: worktreesRemovedSchema, layout: 'indented' },
  review: { schema: sessionReviewSchema, layout: 'indented' },
  reject: { schema: reviewActionOutcomeSchema, layout: 'indented' },
  stage: { schema: reviewActionOutcomeSchema, layout: 'indented' },
  comment: { schema: reviewRecordSchema, layout: 'indented' },
  accept: { schema: acceptAnswerSchema, layout: 'line' },
  'queue add': { schema: z.object({ added: z.array(queueTaskSchema) }), layout: 'line' },
  'queue list': { schema: queueListAnswerSchema, layout: 'line' },
  'queue remove': { schema: z.object({ removed: queueTaskSchema }), layout: 'line' },
  'queue move': { schema: z.object({ id: z.int(), position: z.int() }), layout: 'line' },
  'queue merge': { schema: mergeResultSchema, layout: 'line' },
  'queue report': { schema: z.object({ repository: z.string(), base_commit: z.nullable(z.string()), tasks: z.array(queueTaskSchema) }), layout: 'line' },
} as const;

export type CliCommand = keyof typeof CLI_ANSWERS;
/** What a command answers, as a reader gets it. */
export type CliAnswer<C extends CliCommand> = z.infer<(typeof CLI_ANSWERS)[C]['schema']>;

/** What the CLI may print as a command's answer (before a reader's defaults). */
export type CliAnswerInput<C extends CliCommand> = z.input<(typeof CLI_ANSWERS)[C]['schema']>;

/** A command's answer as it is printed: one value, with the line break that ends it. */
export function formatCliAnswer<C extends CliCommand>(command: C, answer: CliAnswerInput<C>): string {
  return `${JSON.stringify(answer, null, CLI_ANSWERS[command].layout === 'indented' ? 2 : undefined)}\n`;
}

/**
 * What a reader makes of a command's stdout: its answer, or its failure in the
 * envelope (a 0.x runner's `error` read the same way). Anything else is undefined: the
 * reader says the runner answered what it cannot read.
 */
export function readCliAnswer<C extends CliCommand>(
  command: C,
  stdout: string,
): { ok: true; answer: CliAnswer<C> } | { ok: false; failure: Failure } | undefined {
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    return undefined;
  }
  const answer = CLI_ANSWERS[command].schema.safeParse(json);
  if (answer.success) return { ok: true, answer: answer.data as CliAnswer<C> };
  const failed = z.union([failureAnswerSchema, runRefusedOutcomeSchema]).safeParse(json);
  if (failed.success) return { ok: false, failure: failed.data.failure };
  const legacy = z.object({ error: failureSchema }).safeParse(json);
  return legacy.success ? { ok: false, failure: legacy.data.error } : undefined;
}
