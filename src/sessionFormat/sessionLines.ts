import { z } from 'zod';

/**
 * The session file format (one JSON object a line), exactly as documented in the
 * codeloops session format: `session_start`, then `iteration` lines, then at most
 * one `session_end`. Readers accept extra fields; no other line types belong here.
 */

export const CRITIC_DECISIONS = ['DONE', 'CONTINUE', 'ERROR'] as const;
export type CriticDecisionKind = (typeof CRITIC_DECISIONS)[number];

export const OUTCOMES = ['success', 'failed', 'interrupted', 'max_iterations_reached'] as const;
export type Outcome = (typeof OUTCOMES)[number];

const timestamp = z.string().refine((value) => !Number.isNaN(Date.parse(value)), 'not an ISO 8601 datetime');
const count = z.number().int().nonnegative();
const seconds = z.number().nonnegative();

/**
 * The original codeloops stored display text such as `DONE (confidence: 95%)` and
 * `user_interrupted`; read those as the typed values so old sessions list correctly.
 */
const criticDecision = z.string().transform((value, ctx): CriticDecisionKind => {
  const word = /^\s*(DONE|CONTINUE|ERROR)\b/i.exec(value)?.[1]?.toUpperCase();
  if (word === 'DONE' || word === 'CONTINUE' || word === 'ERROR') return word;
  ctx.addIssue({ code: 'custom', message: `unknown critic_decision ${JSON.stringify(value)}` });
  return z.NEVER;
});

const outcome = z.string().transform((value, ctx): Outcome => {
  const normalized = value.trim().toLowerCase() === 'user_interrupted' ? 'interrupted' : value.trim().toLowerCase();
  if ((OUTCOMES as readonly string[]).includes(normalized)) return normalized as Outcome;
  ctx.addIssue({ code: 'custom', message: `unknown outcome ${JSON.stringify(value)}` });
  return z.NEVER;
});

export const sessionStartLineSchema = z.looseObject({
  type: z.literal('session_start'),
  timestamp,
  prompt: z.string(),
  working_dir: z.string(),
  actor_agent: z.string(),
  critic_agent: z.string(),
  actor_model: z.string().nullable(),
  critic_model: z.string().nullable(),
  max_iterations: count.nullable(),
  /** Extra field: the session this one continues (see `codeloops resume`). */
  resumed_from: z.string().optional(),
  /** Extra field: the last iteration of the session it continues; this one's iterations carry on the numbering from there. */
  resumed_after_iteration: z.number().int().nonnegative().optional(),
});

export const iterationLineSchema = z.looseObject({
  type: z.literal('iteration'),
  iteration_number: z.number().int().positive(),
  actor_output: z.string(),
  actor_stderr: z.string(),
  actor_exit_code: z.number().int(),
  actor_duration_secs: seconds,
  git_diff: z.string(),
  git_files_changed: count,
  critic_decision: criticDecision,
  feedback: z.string().nullable(),
  timestamp,
  /** Extra fields written by this runner; absent in sessions from other writers. */
  git_insertions: count.optional(),
  git_deletions: count.optional(),
  remaining_issues: z.array(z.string()).optional(),
  critic_reverted_files: z.array(z.string()).optional(),
});

export const sessionEndLineSchema = z.looseObject({
  type: z.literal('session_end'),
  outcome,
  iterations: count,
  summary: z.string().nullable(),
  confidence: z.number().nullable(),
  duration_secs: seconds,
  timestamp,
  /** Extra field: what went wrong, for `failed`. */
  error: z.string().nullable().optional(),
});

export const sessionLineSchema = z.discriminatedUnion('type', [
  sessionStartLineSchema,
  iterationLineSchema,
  sessionEndLineSchema,
]);

export type SessionStartLine = z.infer<typeof sessionStartLineSchema>;
export type IterationLine = z.infer<typeof iterationLineSchema>;
export type SessionEndLine = z.infer<typeof sessionEndLineSchema>;
export type SessionLine = z.infer<typeof sessionLineSchema>;
