import { z } from 'zod';
import { usageSchema } from '../agents/agentEvents.js';
import { fileChangeSchema } from '../loop/runEvents.js';
import { CRITIC_DECISIONS, OUTCOMES } from '../sessionFormat/sessionLines.js';

/**
 * What a viewer shows of a session: light enough to send whole (no agent output, no
 * diffs), with per-iteration details fetched on demand. One model for the editor's
 * viewer and the browser's; this file has no Node imports, so both can load it.
 * Built by `sessionViewBuilder.ts`.
 */

export const iterationViewSchema = z.object({
  number: z.number().int(),
  decision: z.enum(CRITIC_DECISIONS),
  feedback: z.string().nullable(),
  remainingIssues: z.array(z.string()),
  /** The critic's summary and confidence when it said DONE. */
  summary: z.string().nullable(),
  confidence: z.number().nullable(),
  finishedAt: z.string(),
  actorDurationSecs: z.number(),
  actorExitCode: z.number().int(),
  /** How long the review took (repair included), when the sidecar recorded it. */
  criticDurationSecs: z.number().nullable(),
  filesChanged: z.number().int(),
  insertions: z.number().int().nullable(),
  deletions: z.number().int().nullable(),
  files: z.array(fileChangeSchema),
  actorUsage: usageSchema.nullable(),
  criticUsage: usageSchema.nullable(),
  toolCalls: z.number().int().nullable(),
  criticRevertedFiles: z.array(z.string()),
  /** Sizes, so a viewer can warn before asking for megabytes. */
  actorOutputChars: z.number().int(),
  diffChars: z.number().int(),
});
export type IterationView = z.infer<typeof iterationViewSchema>;

/** Something that happened between iterations: a resume, an interruption, a rollback or its undo. */
export const timelineNoteSchema = z.object({
  kind: z.enum(['resumed', 'interrupted', 'rollback', 'rollback_undone']),
  at: z.string(),
  /** Shown after this iteration (0: before the first). */
  afterIteration: z.number().int().nonnegative(),
  text: z.string(),
});
export type TimelineNote = z.infer<typeof timelineNoteSchema>;

export const sessionViewSchema = z.object({
  id: z.string(),
  prompt: z.string(),
  workingDir: z.string(),
  project: z.string(),
  actorAgent: z.string(),
  criticAgent: z.string(),
  actorModel: z.string().nullable(),
  criticModel: z.string().nullable(),
  maxIterations: z.number().int().nullable(),
  startedAt: z.string(),
  outcome: z.enum(OUTCOMES).nullable(),
  summary: z.string().nullable(),
  confidence: z.number().nullable(),
  error: z.string().nullable(),
  durationSecs: z.number().nullable(),
  iterations: z.array(iterationViewSchema),
  /** Totals over every agent run that reported them. */
  totalCostUsd: z.number().nullable(),
  totalTokens: z.number().nullable(),
  warnings: z.array(z.string()),
  /** The session this one carries on (`codeloops resume`), if any. */
  resumedFrom: z.string().nullable(),
  notes: z.array(timelineNoteSchema),
});
export type SessionView = z.infer<typeof sessionViewSchema>;

export const iterationDetailSchema = z.object({
  number: z.number().int(),
  actorOutput: z.string(),
  actorStderr: z.string(),
  diff: z.string(),
  criticOutput: z.string().nullable(),
});
export type IterationDetail = z.infer<typeof iterationDetailSchema>;

