import type { Repository } from '../git/repository.js';
import { lastMoveNumber, listSessionRefs, moveRef, readSnapshot, sessionHeadRef, type TreeMoveKind } from '../git/snapshots.js';
import { moveTree, type Move } from '../git/treeMove.js';
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
