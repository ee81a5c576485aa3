import * as z from './zod.js';

/** What a rollback or its undo did, or would do: `codeloops rollback --json`, and what the editor is told. */

export const ROLLBACK_RESULTS = ['rolled_back', 'undone', 'conflict', 'nothing_to_roll_back', 'snapshot_missing'] as const;
export type RollbackResultKind = (typeof ROLLBACK_RESULTS)[number];

const paths = z.array(z.string());

/** What every move of the user's files reports (a rollback, an apply, their undo): the paths it touched, or would, and why not others. */
export const treeMoveFields = {
  /** Files written with the target tree's version. */
  restored: paths,
  /** Of `restored`, the files the tree did not have before: written anew (listed as A, the others as M). */
  added: paths,
  /** Files removed because the target tree has none there. */
  removed: paths,
  /** Nested repositories and submodules, never touched. */
  skipped: paths,
  /** Paths the user changed (since codeloops last left them, or since the session started from them) that the move would overwrite. */
  conflicts: paths,
  /** Paths in the way that no snapshot holds (ignored files, folders with such files): never removed, not even when forced. */
  blocked: paths,
  /** Conflicting paths overwritten on the user's say (their content is in the undo snapshot). */
  overwritten: paths,
  /** The ref holding the tree as it was just before this move. */
  saved_ref: z.nullable(z.string()),
  warnings: paths,
  /** True when nothing was written: the result says what would happen. */
  dry_run: z.boolean(),
};

export const rollbackOutcomeSchema = z.object({
  result: z.enum(ROLLBACK_RESULTS),
  message: z.string(),
  session_id: z.string(),
  /** The iteration the tree was (or would have been) put back before; null for an undo. */
  iteration: z.nullable(z.int()),
  /** Which rollback of this session (1, 2, …) was made or undone. */
  rollback: z.nullable(z.int()),
  ...treeMoveFields,
});
export type RollbackOutcome = z.infer<typeof rollbackOutcomeSchema>;
