import { treeMoveFields } from './rollbackOutcome.js';
import * as z from './zod.js';

/**
 * What `codeloops apply` did, or would do: a session's changes put into a working
 * tree (the other way of a rollback), or that undone. `codeloops apply --json`, and
 * what the editor is told.
 */

export const APPLY_RESULTS = ['applied', 'apply_undone', 'conflict', 'nothing_to_apply', 'snapshot_missing'] as const;
export type ApplyResultKind = (typeof APPLY_RESULTS)[number];

export const applyOutcomeSchema = z.object({
  result: z.enum(APPLY_RESULTS),
  message: z.string(),
  session_id: z.string(),
  /** Which apply of this session (1, 2, …) was made or undone. */
  apply: z.nullable(z.int()),
  /** The working tree the changes go to. */
  target_dir: z.string(),
  ...treeMoveFields,
  /** For a candidate: the group's worktrees removed after the apply, and those kept with why. */
  worktrees_removed: z.array(z.string()),
  worktrees_kept: z.array(z.object({ label: z.string(), reason: z.string() })),
});
export type ApplyOutcome = z.infer<typeof applyOutcomeSchema>;
