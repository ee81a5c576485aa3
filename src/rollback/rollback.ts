import { openRepository } from '../git/repository.js';
import { lastMoveNumber, lastTree, listSessionRefs, moveRef, readSnapshot, sessionHeadRef, snapshotIterations, snapshotRef } from '../git/snapshots.js';
import { moveTree } from '../git/treeMove.js';
import { acquireRepositoryLock } from '../loop/repositoryLock.js';
import type { RollbackOutcome } from '../sessionFormat/rollbackOutcome.js';
import { IterationNotFoundError } from '../sessions/sessionErrors.js';
import { noMove, settleMove, undoLastMove, undoSettlement } from './numberedMoves.js';

/**
 * Rollback and its undo: puts the paths a loop changed back to how they were before
 * an iteration, and only those. Both directions are the same move, "from the tree
 * codeloops last left to a target tree" (`git/treeMove.ts`), guarded the same way:
 *
 * - the paths to touch are those that differ between the session's last tree (its
 *   `head` ref) and the target; whatever else the user has (untracked, ignored, edited
 *   elsewhere) is not looked at;
 * - a path the user changed since that last tree, and that the move would overwrite,
 *   is a conflict: nothing changes unless `force`;
 * - the current tree is snapshotted first, so every move can be undone.
 *
 * Never `reset --hard`, `clean` or `checkout` of a branch: HEAD, the index and the
 * stash stay as they are.
 */

export interface RollbackRequest {
  sessionId: string;
  /** The session's `working_dir`: the repository holding its snapshots. */
  workingDir: string;
  /** The session's sidecar folder, where the rollback is recorded. */
  sidecarDir: string;
  /** Overwrite conflicting paths: all of them (true), or only these (what a user was shown and agreed to). */
  force: boolean | readonly string[];
  /** Say what would happen, write nothing. */
  dryRun?: boolean;
}

/** Puts the tree back to how it was before `iteration` (default: the last iteration with snapshots). */
export async function rollBack(request: RollbackRequest & { iteration?: number }): Promise<RollbackOutcome> {
  const repository = await openRepository(request.workingDir);
  const lock = acquireRepositoryLock(repository);
  try {
    const refs = await listSessionRefs(repository, request.sessionId);
    const iterations = snapshotIterations(refs, request.sessionId);
    const outcome = emptyOutcome(request.sessionId);
    if (iterations.length === 0) {
      return {
        ...outcome,
        result: 'snapshot_missing',
        iteration: request.iteration ?? null,
        message:
          `No snapshots of session ${request.sessionId} are in ${repository.root}: they were deleted, the repository was cloned afresh, ` +
          `or the session was recorded by a runner that does not take them. Nothing was changed.`,
      };
    }
    const iteration = request.iteration ?? iterations.at(-1)!;
    if (iteration < 1 || iteration > iterations.at(-1)!) {
      throw new IterationNotFoundError(
        `Session ${request.sessionId} has no iteration ${iteration} to roll back (its snapshots cover iterations ${describeRange(iterations)}).`,
      );
    }
    const target = await readSnapshot(repository, snapshotRef(request.sessionId, iteration, 'pre'));
    const last = await lastTree(repository, request.sessionId, refs, iterations);
    if (!target || !last) {
      return {
        ...outcome,
        result: 'snapshot_missing',
        iteration,
        message: `The snapshot of the tree before iteration ${iteration} of session ${request.sessionId} is gone from ${repository.root}. Nothing was changed.`,
      };
    }
    const rollback = lastMoveNumber(refs, request.sessionId, 'rollback') + 1;
    const savedRef = moveRef(request.sessionId, 'rollback', rollback, 'before');
    const moved = await moveTree(repository, {
      from: last,
      to: target,
      force: request.force,
      saveCurrentAs: savedRef,
      afterRefs: [moveRef(request.sessionId, 'rollback', rollback, 'after'), sessionHeadRef(request.sessionId)],
      message: `codeloops ${request.sessionId} rollback ${rollback} to before iteration ${iteration}`,
      dryRun: Boolean(request.dryRun),
    });
    return settleMove({ ...outcome, iteration }, moved, {
      nothing: {
        result: 'nothing_to_roll_back',
        message: `The files session ${request.sessionId} changed are already as they were before iteration ${iteration}. Nothing was changed.`,
      },
      action: 'roll back',
      made: 'rolled_back',
      previewWords: `Would roll session ${request.sessionId} back to before iteration ${iteration}`,
      madeWords: `Rolled session ${request.sessionId} back to before iteration ${iteration}`,
      undoable: true,
      sidecarDirectory: request.sidecarDir,
      record: { type: 'rollback', rollback, to_iteration: iteration, before_ref: savedRef },
      savedRef,
      madeFields: { rollback },
    });
  } finally {
    lock.release();
  }
}

/** Undoes the session's latest rollback, if the tree has not moved on since. */
export async function undoRollback(request: RollbackRequest): Promise<RollbackOutcome> {
  const repository = await openRepository(request.workingDir);
  const lock = acquireRepositoryLock(repository);
  try {
    const outcome = emptyOutcome(request.sessionId);
    const { sessionId } = request;
    const undo = await undoLastMove(repository, {
      sessionId,
      kind: 'rollback',
      force: request.force,
      dryRun: Boolean(request.dryRun),
      followsSessionHead: true,
    });
    if (undo.kind === 'none') return { ...outcome, message: `Session ${sessionId} has no rollback to undo. Nothing was changed.` };
    const rollback = undo.move;
    if (undo.kind === 'already_undone')
      return { ...outcome, rollback, message: `The last rollback of session ${sessionId} is already undone. Nothing was changed.` };
    if (undo.kind === 'snapshot_missing') {
      return {
        ...outcome,
        rollback,
        result: 'snapshot_missing',
        message: `The snapshots of rollback ${rollback} of session ${sessionId} are gone from ${repository.root}. Nothing was changed.`,
      };
    }
    if (undo.kind === 'moved_on') {
      return {
        ...outcome,
        rollback,
        message: `Session ${sessionId} has moved on since its rollback ${rollback} (it was resumed or rolled back again); roll back to an iteration instead. Nothing was changed.`,
      };
    }
    return settleMove(
      { ...outcome, rollback },
      undo.moved,
      undoSettlement(
        { kind: 'rollback', move: rollback, sessionId, sidecarDirectory: request.sidecarDir },
        { nothing: 'nothing_to_roll_back', made: 'undone' },
      ),
    );
  } finally {
    lock.release();
  }
}

function emptyOutcome(sessionId: string): RollbackOutcome {
  return { result: 'nothing_to_roll_back', message: '', session_id: sessionId, iteration: null, rollback: null, ...noMove() };
}

function describeRange(iterations: readonly number[]): string {
  return iterations.length === 1 ? String(iterations[0]) : `${iterations[0]}–${iterations.at(-1)}`;
}
