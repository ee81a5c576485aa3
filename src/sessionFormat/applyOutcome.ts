import * as z from './zod.js';

/**
 * What `codeloops apply` did, or would do: a session's changes put into a working
 * tree (the other way of a rollback), or that undone. `codeloops apply --json`, and
 * what the editor is told.
 */

export const APPLY_RESULTS = ['applied', 'apply_undone', 'conflict', 'nothing_to_apply', 'snapshot_missing'] as const;
export type ApplyResultKind = (typeof APPLY_RESULTS)[number];

const paths = z.array(z.string());

export const applyOutcomeSchema = z.object({
  result: z.enum(APPLY_RESULTS),
  message: z.string(),
  session_id: z.string(),
  /** Which apply of this session (1, 2, …) was made or undone. */
  apply: z.nullable(z.int()),
  /** The working tree the changes go to. */
  target_dir: z.string(),
  /** Files written with the session's version. */
  restored: paths,
  /** Files removed because the session removed them. */
  removed: paths,
  /** Nested repositories and submodules, never touched. */
  skipped: paths,
  /** Paths the user changed since the session started from them that the apply would overwrite. */
  conflicts: paths,
  /** Paths in the way that no snapshot holds (ignored files, folders with such files): never removed, not even when forced. */
  blocked: paths,
  /** Conflicting paths overwritten on the user's say (their content is in the undo snapshot). */
  overwritten: paths,
  /** The ref holding the tree as it was just before this move. */
  saved_ref: z.nullable(z.string()),
  /** For a candidate: the group's worktrees removed after the apply, and those kept with why. */
  worktrees_removed: paths,
  worktrees_kept: z.array(z.object({ label: z.string(), reason: z.string() })),
  warnings: paths,
  dry_run: z.boolean(),
});
export type ApplyOutcome = z.infer<typeof applyOutcomeSchema>;
