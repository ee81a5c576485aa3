import type { Repository } from '../git/repository.js';
import { lastMoveNumber, listSessionRefs, moveRef, readSnapshot, sessionHeadRef, type TreeMoveKind } from '../git/snapshots.js';
import { conflictMessage, describeMove, moveTree, type Move, type MoveLists } from '../git/treeMove.js';
import type { DistributiveOmit } from '../sessionFormat/distributiveOmit.js';
import { stampEvent, type RunEventInput } from '../sessionFormat/runEvents.js';
import { SidecarRecorder } from '../sessionWriter/sidecarRecorder.js';

/**
 * What rollback and apply share: each is a numbered move of a session's files
 * (`refs/codeloops/<session>/<kind>/<n>/…`), recorded in the session's sidecar, and
 * the latest one can be undone: the tree goes from what the move left back to what
 * it found, guarded like every move (conflict-checked, snapshotted first).
 */

export type UndoneMove =
  | { kind: 'none' }
  | { kind: 'already_undone'; move: number }
  | { kind: 'snapshot_missing'; move: number }
  /** The session's files moved on since (resumed, rolled back again): undoing would throw that away. */
  | { kind: 'moved_on'; move: number }
  | { kind: 'moved'; move: number; moved: Move };

export interface UndoMoveRequest {
  sessionId: string;
  kind: TreeMoveKind;
  force: boolean | readonly string[];
  dryRun: boolean;
  /**
   * The move left the session's own last tree (a rollback): it can be undone only while
   * that is still so, and its undo is the session's last tree in turn.
   */
  followsSessionHead: boolean;
}

/** Undoes the session's latest move of a kind, if there is one and it is not undone yet. The caller holds the repository's lock. */
export async function undoLastMove(repository: Repository, request: UndoMoveRequest): Promise<UndoneMove> {
  const { sessionId, kind } = request;
  const refs = await listSessionRefs(repository, sessionId);
  const move = lastMoveNumber(refs, sessionId, kind);
  if (move === 0) return { kind: 'none' };
  if (refs.has(moveRef(sessionId, kind, move, 'undone'))) return { kind: 'already_undone', move };
  const [before, after] = await Promise.all([
    readSnapshot(repository, moveRef(sessionId, kind, move, 'before')),
    readSnapshot(repository, moveRef(sessionId, kind, move, 'after')),
  ]);
  if (!before || !after) return { kind: 'snapshot_missing', move };
  if (request.followsSessionHead && refs.get(sessionHeadRef(sessionId)) !== after.commit) return { kind: 'moved_on', move };
  const moved = await moveTree(repository, {
    from: after,
    to: before,
    force: request.force,
    saveCurrentAs: moveRef(sessionId, kind, move, 'replaced'),
    afterRefs: [moveRef(sessionId, kind, move, 'undone'), ...(request.followsSessionHead ? [sessionHeadRef(sessionId)] : [])],
    message: `codeloops ${sessionId} undo ${kind} ${move}`,
    dryRun: request.dryRun,
  });
  return { kind: 'moved', move, moved };
}

/** What every move's outcome holds (`treeMoveFields`), a rollback's, an apply's and their undos'. */
type MoveOutcome = MoveLists & { result: string; message: string; saved_ref: string | null; warnings: string[]; dry_run: boolean };

/** An outcome's move fields before anything moved: no paths, no saved tree, no warning. */
export function noMove(): Omit<MoveOutcome, 'result' | 'message'> {
  return { restored: [], added: [], removed: [], skipped: [], conflicts: [], blocked: [], overwritten: [], saved_ref: null, warnings: [], dry_run: false };
}

type MoveRecord = Extract<RunEventInput, { type: 'rollback' | 'rollback_undone' | 'applied' | 'apply_undone' }>;

/** How one kind of move says what it did, and records it. */
export interface MoveSettlement<O extends MoveOutcome> {
  /** There was nothing to move: the result, and why. */
  nothing: { result: O['result']; message: string };
  /** What the move was for, as a conflict's message says it: "roll back", "undo the apply". */
  action: string;
  /** The result of a move made, or previewed in a dry run. */
  made: O['result'];
  /** The move in words, before the paths it touched: "Rolled session s back to before iteration 2"; "Would roll …" for a dry run. */
  madeWords: string;
  previewWords: string;
  /** How writing a file is said (a rollback restores, an apply writes). */
  written?: [past: string, present: string];
  /** A made move that can be undone says so. */
  undoable: boolean;
  sidecarDirectory: string;
  /** Its record in the sidecar; the paths it touched are added here. */
  record: DistributiveOmit<MoveRecord, 'restored' | 'removed' | 'overwritten'>;
  /** The ref holding the tree as it was before a made move. */
  savedRef: string;
  /** Fields only a made move has (the number it was just given). */
  madeFields?: Partial<O>;
}

/**
 * A move's result as its outcome, the same four ways for a rollback, an apply and
 * their undos: nothing to move, a conflict (nothing changed), a dry run's preview, or
 * made (and recorded in the session's sidecar).
 */
export function settleMove<O extends MoveOutcome>(base: O, moved: Move, how: MoveSettlement<O>): O {
  const outcome: O = { ...base, ...moved.lists };
  switch (moved.kind) {
    case 'nothing':
      return { ...outcome, ...how.nothing };
    case 'conflict':
      return { ...outcome, result: 'conflict', message: conflictMessage(moved.lists, how.action) };
    case 'preview':
      return {
        ...outcome,
        result: how.made,
        dry_run: true,
        message: `${how.previewWords}: ${describeMove(moved.lists, 'would ', how.written)}. Nothing was changed (dry run).`,
      };
    case 'moved': {
      const { restored, removed, overwritten } = moved.lists;
      const warnings = recordMove(how.sidecarDirectory, { ...how.record, restored, removed, overwritten });
      const undoable = how.undoable ? ' The tree as it was is kept, so this can be undone.' : '';
      return {
        ...outcome,
        ...how.madeFields,
        result: how.made,
        saved_ref: how.savedRef,
        warnings,
        message: `${how.madeWords}: ${describeMove(moved.lists, '', how.written)}.${undoable}`,
      };
    }
  }
}

/** How the undo of a session's latest rollback or apply says what it did, and records it: the same words for both kinds. */
export function undoSettlement<O extends MoveOutcome>(
  undone: { kind: TreeMoveKind; move: number; sessionId: string; sidecarDirectory: string },
  results: { nothing: O['result']; made: O['result'] },
): MoveSettlement<O> {
  const { kind, move, sessionId } = undone;
  return {
    nothing: { result: results.nothing, message: `The files of ${kind} ${move} are already as they were before it. Nothing was changed.` },
    action: `undo the ${kind}`,
    made: results.made,
    previewWords: `Would undo ${kind} ${move} of session ${sessionId}`,
    madeWords: `Undid ${kind} ${move} of session ${sessionId}`,
    undoable: false,
    sidecarDirectory: undone.sidecarDirectory,
    record: kind === 'rollback' ? { type: 'rollback_undone', rollback: move } : { type: 'apply_undone', apply: move },
    savedRef: moveRef(sessionId, kind, move, 'replaced'),
  };
}

/** Records a move in the session's sidecar; a record that cannot be written is a warning, not a failure (the move is made). */
export function recordMove(sidecarDir: string, input: RunEventInput): string[] {
  try {
    const recorder = SidecarRecorder.open(sidecarDir);
    try {
      recorder.record(stampEvent(input));
    } finally {
      recorder.close();
    }
    return [];
  } catch (error) {
    return [
      `the ${input.type === 'applied' || input.type === 'apply_undone' ? 'apply' : 'rollback'} was made but could not be recorded in ${sidecarDir}: ${(error as Error).message}`,
    ];
  }
}
