import { usageSchema } from '../sessionFormat/agentEvents.js';
import { checkOutcomeShape, fileChangeSchema, loopGuardsSchema } from '../sessionFormat/runEvents.js';
import { reviewItemsSchema } from '../sessionFormat/reviewRecords.js';
import { iterationFactsSchema, sessionEndLineSchema, sessionStartLineSchema } from '../sessionFormat/sessionLines.js';
import {
  PROTECTED_CHANGE_STATUSES,
  protectedChangeSchema,
  REQUIREMENT_SOURCES,
  requirementStatusSchema,
  UNVERIFIED_DONES,
} from '../sessionFormat/verification.js';
import * as z from '../sessionFormat/zod.js';

/**
 * What a viewer shows of a session: light enough to send whole (no agent output, no
 * diffs), with per-iteration details fetched on demand. One model for the editor's
 * viewer and the browser's; this file has no Node imports, so both can load it.
 * Its records are the session's own lines (the start and end lines whole, each
 * iteration line without its outputs and diff), with what the sidecar adds beside
 * them. Built by `sessionViewBuilder.ts`.
 */

/**
 * A protected change standing on an iteration's tree (a `protected_change` event), and
 * where it stands for the loop now: a weakening the user has accepted since (or an
 * acceptance they took back) shows as it will be judged next.
 */
export const protectedStandingSchema = z.object({
  change: protectedChangeSchema,
  status: z.enum(PROTECTED_CHANGE_STATUSES),
  /** The user's reason, when they accepted it. */
  reason: z.nullable(z.string()),
});
export type ProtectedStanding = z.infer<typeof protectedStandingSchema>;

export const iterationViewSchema = z.object({
  ...iterationFactsSchema.shape,
  /** Line counts, from the line or else from the recorded diff; null where nothing says (binary files). */
  git_insertions: z.nullable(z.int()),
  git_deletions: z.nullable(z.int()),
  remaining_issues: z.array(z.string()),
  critic_reverted_files: z.array(z.string()),
  /** The critic's summary and confidence when it said DONE. */
  summary: z.nullable(z.string()),
  confidence: z.nullable(z.number()),
  /** How long the critic took (its repair included), when the sidecar recorded it. */
  critic_duration_secs: z.nullable(z.number()),
  files: z.array(fileChangeSchema),
  actor_usage: z.nullable(usageSchema),
  critic_usage: z.nullable(usageSchema),
  tool_calls: z.nullable(z.int()),
  /** The recorded diff (and so `files`) is the whole change since HEAD, not the iteration's own: the original codeloops recorded it so. */
  diff_since_head: z.boolean(),
  /** Sizes, so a viewer can warn before asking for megabytes. */
  actor_output_chars: z.int(),
  diff_chars: z.int(),
  /** The project's checks on this iteration's tree, when the sidecar recorded them. */
  checks: z.array(z.object(checkOutcomeShape)),
  /** The protected changes that stood on this iteration's tree: weakenings, and those accepted or allowed. */
  protected_standing: z.array(protectedStandingSchema),
  /** Why the gate refused the critic's DONE (a `done_refused` event, else the line's fields); null when it did not. */
  done_refused: z.nullable(
    z.object({
      failed_checks: z.array(z.string()),
      /** The start's tests that do not pass on the final code (the oracle's findings), by id. */
      failed_tests: z.optional(z.array(z.string())),
      protected_changes: z.array(protectedChangeSchema),
      /** Nothing but the critic's word stood behind it (see `done_refused` in runEvents.ts). */
      unverified: z.optional(z.enum(UNVERIFIED_DONES)),
      /** The ids of the requirements unmet or without evidence. */
      unmet_requirements: z.optional(z.array(z.string())),
    }),
  ),
  /** The task's requirements as the critic judged them on this iteration, when the run was verified and had a checklist. */
  requirements: z.optional(z.object({ source: z.enum(REQUIREMENT_SOURCES), requirements: z.array(requirementStatusSchema) })),
});
export type IterationView = z.infer<typeof iterationViewSchema>;

/** Something that happened between iterations: a resume, an interruption, a wait for an agent's limit, a rollback or its undo, a candidate's worktree setup, an apply, an import. */
export const timelineNoteSchema = z.object({
  kind: z.enum([
    'resumed',
    'interrupted',
    'rollback',
    'rollback_undone',
    'stall',
    'agent_waiting',
    'worktree_prepared',
    'applied',
    'apply_undone',
    'imported',
    'needs_input_answered',
  ]),
  at: z.string(),
  /** Shown after this iteration (0: before the first). */
  after_iteration: z.int().check(z.nonnegative()),
  text: z.string(),
});
export type TimelineNote = z.infer<typeof timelineNoteSchema>;

export const sessionViewSchema = z.object({
  id: z.string(),
  project: z.string(),
  /** The `session_start` line as recorded (its documented and known fields). */
  start: z.object(sessionStartLineSchema.shape),
  /** The `session_end` line, or null while the session runs (or after a crash). */
  end: z.nullable(z.object(sessionEndLineSchema.shape)),
  iterations: z.array(iterationViewSchema),
  /** Totals over every agent run that reported them. */
  total_cost_usd: z.nullable(z.number()),
  total_tokens: z.nullable(z.number()),
  /** Lines of the session file that were skipped, and why. */
  warnings: z.array(z.string()),
  notes: z.array(timelineNoteSchema),
  /** The checks, budget and stall detection of its last run, when recorded. */
  guards: z.nullable(loopGuardsSchema),
  /** The critic's findings and the user's comments, rejected hunks and stagings, with where each stands. */
  review: reviewItemsSchema,
});
export type SessionView = z.infer<typeof sessionViewSchema>;

export const iterationDetailSchema = z.object({
  number: z.int(),
  actor_output: z.string(),
  actor_stderr: z.string(),
  diff: z.string(),
  critic_output: z.nullable(z.string()),
});
export type IterationDetail = z.infer<typeof iterationDetailSchema>;
