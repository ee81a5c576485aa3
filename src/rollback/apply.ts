import { openRepository } from '../git/repository.js';
import { lastMoveNumber, listSessionRefs, moveRef, sessionChangeEnds } from '../git/snapshots.js';
import { acquireRepositoryLock } from '../loop/repositoryLock.js';
import type { ApplyOutcome } from '../sessionFormat/applyOutcome.js';
import { moveTree } from '../git/treeMove.js';
import { noMove, settleMove, undoLastMove, undoSettlement } from './numberedMoves.js';

/**
 * Apply: puts a session's whole change (from the tree before its first iteration to
 * the last tree it left) into a working tree: rollback the other way, with the same
 * guards. Only the paths the session changed are touched; a path the user changed
 * since the session's starting tree is a conflict (nothing changes unless forced);
 * the tree is snapshotted first, so every apply can be undone. Its snapshots must be
 * in the target's repository: a candidate's worktree shares its refs with the
 * user's repository, and an imported session brings its own.
 */

/** An apply writes the session's version of a file. */
const WRITTEN: [string, string] = ['wrote', 'write'];

export interface ApplyRequest {
  sessionId: string;
  /** The working tree the changes go to. */
  targetDir: string;
  /** The session's sidecar folder, where the apply is recorded. */
  sidecarDir: string;
  /** Overwrite conflicting paths: all of them (true), or only these (what a user was shown and agreed to). */
  force: boolean | readonly string[];
  dryRun?: boolean;
}

export async function applySession(request: ApplyRequest): Promise<ApplyOutcome> {
  const repository = await openRepository(request.targetDir);
  const lock = acquireRepositoryLock(repository);
  try {
    const outcome = emptyOutcome(request);
    const ends = await sessionChangeEnds(repository, request.sessionId);
    if (!ends) {
      return {
        ...outcome,
        result: 'snapshot_missing',
        message: `The snapshots of session ${request.sessionId} are not in ${repository.root} (deleted, another repository, or a session recorded without them). Nothing was changed.`,
      };
    }
    const refs = await listSessionRefs(repository, request.sessionId);
    const apply = lastMoveNumber(refs, request.sessionId, 'apply') + 1;
    const savedRef = moveRef(request.sessionId, 'apply', apply, 'before');
    const moved = await moveTree(repository, {
      from: ends.start,
      to: ends.end,
      force: request.force,
      saveCurrentAs: savedRef,
      afterRefs: [moveRef(request.sessionId, 'apply', apply, 'after')],
      message: `codeloops ${request.sessionId} apply ${apply}`,
      dryRun: Boolean(request.dryRun),
    });
    return settleMove(outcome, moved, {
      nothing: { result: 'nothing_to_apply', message: `${repository.root} already has every change of session ${request.sessionId}. Nothing was changed.` },
      action: 'apply the session',
      made: 'applied',
      previewWords: `Would apply session ${request.sessionId} to ${repository.root}`,
      madeWords: `Applied session ${request.sessionId} to ${repository.root}`,
      written: WRITTEN,
      undoable: true,
      sidecarDirectory: request.sidecarDir,
      record: { type: 'applied', apply, target_dir: repository.root, before_ref: savedRef },
      savedRef,
      madeFields: { apply },
    });
  } finally {
    lock.release();
  }
}

/** Undoes the session's latest apply, if it is not undone yet. */
export async function undoApply(request: ApplyRequest): Promise<ApplyOutcome> {
  const repository = await openRepository(request.targetDir);
  const lock = acquireRepositoryLock(repository);
  try {
    const outcome = emptyOutcome(request);
    const { sessionId } = request;
    const undo = await undoLastMove(repository, { sessionId, kind: 'apply', force: request.force, dryRun: Boolean(request.dryRun), followsSessionHead: false });
    if (undo.kind === 'none') return { ...outcome, message: `Session ${sessionId} was never applied here. Nothing was changed.` };
    const apply = undo.move;
    if (undo.kind === 'already_undone' || undo.kind === 'moved_on') {
      return { ...outcome, apply, message: `The last apply of session ${sessionId} is already undone. Nothing was changed.` };
    }
    if (undo.kind === 'snapshot_missing') {
      return {
        ...outcome,
        apply,
        result: 'snapshot_missing',
        message: `The snapshots of apply ${apply} of session ${sessionId} are gone. Nothing was changed.`,
      };
    }
    return settleMove(
      { ...outcome, apply },
      undo.moved,
      undoSettlement({ kind: 'apply', move: apply, sessionId, sidecarDirectory: request.sidecarDir }, { nothing: 'nothing_to_apply', made: 'apply_undone' }),
    );
  } finally {
    lock.release();
  }
}

function emptyOutcome(request: ApplyRequest): ApplyOutcome {
  // `--json` prints the fields in this order: the worktrees before the warnings, as it always has.
  const { warnings, dry_run, ...paths } = noMove();
  return {
    result: 'nothing_to_apply',
    message: '',
    session_id: request.sessionId,
    apply: null,
    target_dir: request.targetDir,
    ...paths,
    worktrees_removed: [],
    worktrees_kept: [],
    warnings,
    dry_run,
  };
}
