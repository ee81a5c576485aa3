import { needsInputSchema } from './needsInput.js';
import { findingSchema } from './reviewRecords.js';
import { verifiedBySchema } from './testResults.js';
import { protectedChangeSchema, requirementStatusSchema, VERIFICATIONS } from './verification.js';
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

/**
 * Why a loop ended `failed` before its end: a cost, token or time budget crossed, it
 * went in circles, it needs the user and nobody could answer (`needs_input`), or an
 * agent's usage limit outlasted the wait allowed (`usage_limit`).
 */
export const STOP_REASONS = ['budget_cost', 'budget_tokens', 'duration', 'stalled', 'needs_input', 'usage_limit'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

const timestamp = z.string().check(z.refine((value) => !Number.isNaN(Date.parse(value)), 'not an ISO 8601 datetime'));
const count = z.int().check(z.nonnegative());
const seconds = z.number().check(z.nonnegative());

/**
 * The words other writers used for a decision, by what they mean. The original
 * codeloops wrote display text (`DONE (confidence: 95%)`, `CONTINUE (2 issues)`) and
 * its test data other words in any case (`approved`, `fail`).
 */
const DECISION_WORDS: Readonly<Record<string, CriticDecisionKind>> = {
  done: 'DONE',
  approve: 'DONE',
  approved: 'DONE',
  accept: 'DONE',
  accepted: 'DONE',
  complete: 'DONE',
  completed: 'DONE',
  success: 'DONE',
  pass: 'DONE',
  passed: 'DONE',
  lgtm: 'DONE',
  continue: 'CONTINUE',
  reject: 'CONTINUE',
  rejected: 'CONTINUE',
  revise: 'CONTINUE',
  retry: 'CONTINUE',
  error: 'ERROR',
  fail: 'ERROR',
  failed: 'ERROR',
  failure: 'ERROR',
};

/**
 * What a recorded decision means, by its first word in any case. A word nobody
 * defined counts as ERROR, as an unreadable answer from a critic does; the line is
 * kept, and its text with it (`critic_decision_text`).
 */
export function criticDecisionKind(text: string): CriticDecisionKind {
  const word = /^[\s"'`*_]*([A-Za-z_-]+)/.exec(text)?.[1]?.toLowerCase().replace(/-/g, '_') ?? '';
  return DECISION_WORDS[word] ?? 'ERROR';
}

/** Outcomes other writers used (the original codeloops: `user_interrupted`), by what they mean. */
const OUTCOME_WORDS: Readonly<Record<string, Outcome>> = {
  user_interrupted: 'interrupted',
  interrupt: 'interrupted',
  max_iterations: 'max_iterations_reached',
};

/**
 * A line as read, before its schema checks it: what other writers (the original
 * codeloops, early 2026) wrote differently from the documentation, in the
 * documented terms. A decision that is not exactly DONE, CONTINUE or ERROR becomes
 * one, and its text is kept in `critic_decision_text`; `user_interrupted` is
 * `interrupted`; a failed end whose `summary` holds the error gets it as `error`.
 * Our own lines pass through unchanged.
 */
export function normalizeSessionLine(json: unknown): unknown {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return json;
  const line = json as Record<string, unknown>;
  if (line.type === 'iteration') {
    const normalized = { ...line };
    if (typeof line.critic_decision === 'string' && !isDecision(line.critic_decision)) {
      normalized.critic_decision = criticDecisionKind(line.critic_decision);
      normalized.critic_decision_text = line.critic_decision;
    }
    if (typeof line.critic_verdict === 'string' && !isDecision(line.critic_verdict)) normalized.critic_verdict = criticDecisionKind(line.critic_verdict);
    return normalized;
  }
  if (line.type === 'session_end' && typeof line.outcome === 'string') {
    const word = line.outcome.trim().toLowerCase();
    const outcome = (OUTCOMES as readonly string[]).includes(word) ? word : (OUTCOME_WORDS[word] ?? line.outcome);
    const summaryIsError = outcome === 'failed' && line.error === undefined && typeof line.summary === 'string';
    return { ...line, outcome, ...(summaryIsError ? { error: line.summary } : {}) };
  }
  return json;
}

function isDecision(value: string): value is CriticDecisionKind {
  return (CRITIC_DECISIONS as readonly string[]).includes(value);
}

/**
 * Whether an iteration's `git_diff` is the whole change since HEAD rather than the
 * iteration's own. The original codeloops recorded `git diff HEAD` after each
 * iteration (cumulative); this runner records each iteration's own diff and always
 * writes `git_insertions` with it, which the original never did.
 */
export function diffIsSinceHead(line: { git_insertions?: number }): boolean {
  return line.git_insertions === undefined;
}

const criticDecision = z.enum(CRITIC_DECISIONS);
const outcome = z.enum(OUTCOMES);

/** Which run of an eval (`codeloops eval`) a session is: the eval's id, the suite's task and config by name, the repetition from 1. */
export const evalTagSchema = z.object({ id: z.string(), task: z.string(), config: z.string(), repetition: z.int().check(z.positive()) });
export type EvalTag = z.infer<typeof evalTagSchema>;

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
  /** Extra field: the eval run this session is (`codeloops eval`). */
  eval: z.optional(evalTagSchema),
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
  /** From 1 in this runner's sessions (and the documentation's); from 0 in the original codeloops'. */
  iteration_number: count,
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
  /** Extra field: the critic's own verdict when the gate overruled it (it said DONE, a required check failed or a protected change stood). */
  critic_verdict: z.optional(criticDecision),
  /** Extra field: the weakenings of protected files that stand on this iteration's tree, not accepted (see `protectedChanges.ts`). */
  protected_changes: z.optional(z.array(protectedChangeSchema)),
  /** Extra field: the task's requirements unmet or without evidence the record confirms on this iteration (see `verification.ts`); DONE is refused while any is. */
  unmet_requirements: z.optional(z.array(requirementStatusSchema)),
  /** Extra field: the critic's findings on this iteration's code (see `reviewRecords.ts`). */
  findings: z.optional(z.array(findingSchema)),
  /** Extra field, on a CONTINUE: the critic or the actor cannot go on without the user, and asks them this (see `needsInput.ts`). */
  needs_input: z.optional(needsInputSchema),
  /**
   * Set by readers, never written: the decision as another writer wrote it, when it
   * was not exactly one of the three words (`DONE (confidence: 95%)`, `approved`).
   */
  critic_decision_text: z.optional(z.string()),
});

/** What this runner writes: the documented line exactly, iterations numbered from 1. */
export const writtenIterationLineSchema = z.extend(iterationLineSchema, { iteration_number: z.int().check(z.positive()) });

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
  /** Extra field: the failure's facts, when it has any (a usage limit's `until`, `agent`, `role`, `reason`). */
  error_details: z.optional(z.record(z.string(), z.unknown())),
  /** Extra field: which guard ended the loop (see `STOP_REASONS`). */
  stop_reason: z.optional(z.nullable(z.string())),
  /** Extra fields: what the session's agents used, all runs together (cost null: no agent reported one). */
  total_cost_usd: z.optional(z.nullable(z.number())),
  total_tokens: z.optional(z.number()),
  /** Extra field: part of the cost was estimated from tokens with a price table. */
  cost_estimated: z.optional(z.boolean()),
  /** Extra field, for a success: whether anything but the critic's word stood behind the DONE (see `verification.ts`). */
  verification: z.optional(z.enum(VERIFICATIONS)),
  /** Extra field, for a success: what stood behind the DONE (the start's tests on the final code, new tests, exit codes, the critic's commands). */
  verified_by: z.optional(verifiedBySchema),
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
