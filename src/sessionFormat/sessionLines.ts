import * as z from './zod.js';

/**
 * The session file format (one JSON object a line), exactly as documented in the
 * codeloops session format: `session_start`, then `iteration` lines, then at most
 * one `session_end`. Readers accept extra fields; no other line types belong here.
 * Every other record that carries these fields (run events, the replay, the viewer)
 * derives its shape from these schemas.
 */

export const CRITIC_DECISIONS = ['DONE', 'CONTINUE', 'ERROR'] as const;
export type CriticDecisionKind = (typeof CRITIC_DECISIONS)[number];

export const OUTCOMES = ['success', 'failed', 'interrupted', 'max_iterations_reached'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** Why a guard ended a loop (`failed`): a cost, token or time budget crossed, or the loop went in circles. */
export const STOP_REASONS = ['budget_cost', 'budget_tokens', 'duration', 'stalled'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

const timestamp = z.string().check(z.refine((value) => !Number.isNaN(Date.parse(value)), 'not an ISO 8601 datetime'));
const count = z.int().check(z.nonnegative());
const seconds = z.number().check(z.nonnegative());

/**
 * The original codeloops stored display text such as `DONE (confidence: 95%)` and
 * `user_interrupted`; read those as the typed values so old sessions list correctly.
 */
const criticDecision = z.pipe(
  z.string(),
  z.transform((value: string, ctx): CriticDecisionKind => {
    const word = /^\s*(DONE|CONTINUE|ERROR)\b/i.exec(value)?.[1]?.toUpperCase();
    if (word === 'DONE' || word === 'CONTINUE' || word === 'ERROR') return word;
    ctx.issues.push({ code: 'custom', message: `unknown critic_decision ${JSON.stringify(value)}`, input: value });
    return z.NEVER;
  }),
);

const outcome = z.pipe(
  z.string(),
  z.transform((value: string, ctx): Outcome => {
    const normalized = value.trim().toLowerCase() === 'user_interrupted' ? 'interrupted' : value.trim().toLowerCase();
    if ((OUTCOMES as readonly string[]).includes(normalized)) return normalized as Outcome;
    ctx.issues.push({ code: 'custom', message: `unknown outcome ${JSON.stringify(value)}`, input: value });
    return z.NEVER;
  }),
);

export const sessionStartLineSchema = z.looseObject({
  type: z.literal('session_start'),
  timestamp,
  prompt: z.string(),
  working_dir: z.string(),
  actor_agent: z.string(),
  critic_agent: z.string(),
  actor_model: z.nullable(z.string()),
  critic_model: z.nullable(z.string()),
  max_iterations: z.nullable(count),
  /** Extra field: the session this one continues (see `codeloops resume`). */
  resumed_from: z.optional(z.string()),
  /** Extra field: the last iteration of the session it continues; this one's iterations carry on the numbering from there. */
  resumed_after_iteration: z.optional(count),
  /** Extra field: the candidate group this session is one of (`codeloops run --candidates`). */
  candidate_group: z.optional(z.string()),
  /** Extra field: which candidate of its group it is (`claude`, `codex:gpt-5`, `claude#2`). */
  candidate: z.optional(z.string()),
});

/**
 * What a session is about: the `session_start` line without its type and time.
 * Records derived from these lines (run events, the replay, the viewer) take their
 * `.shape` into strict objects of their own: the lines accept extra fields, the
 * records carry exactly what they declare.
 */
export const sessionHeaderSchema = z.omit(sessionStartLineSchema, { type: true, timestamp: true });
export type SessionHeader = z.infer<typeof sessionHeaderSchema>;

/** The documented fields first, in documented order, then this runner's extra fields. */
export const iterationLineSchema = z.looseObject({
  type: z.literal('iteration'),
  iteration_number: z.int().check(z.positive()),
  actor_output: z.string(),
  actor_stderr: z.string(),
  actor_exit_code: z.int(),
  actor_duration_secs: seconds,
  git_diff: z.string(),
  git_files_changed: count,
  critic_decision: criticDecision,
  feedback: z.nullable(z.string()),
  timestamp,
  /** Extra fields written by this runner; absent in sessions from other writers. */
  git_insertions: z.optional(count),
  git_deletions: z.optional(count),
  remaining_issues: z.optional(z.array(z.string())),
  critic_reverted_files: z.optional(z.array(z.string())),
  /** Extra field: the checks that failed on this iteration's tree (see `[[checks]]`). */
  failed_checks: z.optional(z.array(z.string())),
  /** Extra field: the critic's own verdict when the gate overruled it (it said DONE, a required check failed). */
  critic_verdict: z.optional(criticDecision),
});

/** The fields of an iteration line that are not its outputs or its diff: what a listing or a viewer needs. */
export const iterationFactsSchema = z.omit(iterationLineSchema, { type: true, actor_output: true, actor_stderr: true, git_diff: true });

export const sessionEndLineSchema = z.looseObject({
  type: z.literal('session_end'),
  outcome,
  iterations: count,
  summary: z.nullable(z.string()),
  confidence: z.nullable(z.number()),
  duration_secs: seconds,
  timestamp,
  /** Extra field: what went wrong, for `failed`. */
  error: z.optional(z.nullable(z.string())),
  /** Extra field: which failure it was, for `failed` (see `failures.ts`). */
  error_code: z.optional(z.nullable(z.string())),
  /** Extra field: which guard ended the loop (see `STOP_REASONS`). */
  stop_reason: z.optional(z.nullable(z.string())),
  /** Extra fields: what the session's agents used, all runs together (cost null: no agent reported one). */
  total_cost_usd: z.optional(z.nullable(z.number())),
  total_tokens: z.optional(z.number()),
  /** Extra field: part of the cost was estimated from tokens with a price table. */
  cost_estimated: z.optional(z.boolean()),
});

export const sessionLineSchema = z.discriminatedUnion('type', [sessionStartLineSchema, iterationLineSchema, sessionEndLineSchema]);

export type SessionStartLine = z.infer<typeof sessionStartLineSchema>;
export type IterationLine = z.infer<typeof iterationLineSchema>;
export type IterationFacts = z.infer<typeof iterationFactsSchema>;
export type SessionEndLine = z.infer<typeof sessionEndLineSchema>;
export type SessionLine = z.infer<typeof sessionLineSchema>;

/** `Omit` for the lines' types, which accept extra fields: keeps the named fields (plain `Omit` loses them to the index signature). */
export type WithoutFields<T, K extends PropertyKey> = { [P in keyof T as P extends K ? never : P]: T[P] };

/** What a writer supplies for a line: everything but the type. */
export type IterationLineFields = WithoutFields<z.input<typeof iterationLineSchema>, 'type'>;
export type SessionEndLineFields = WithoutFields<z.input<typeof sessionEndLineSchema>, 'type'>;
