import { applyPatch, diffHunks, diffPatch, type FilePatch, type Hunk } from '../git/hunks.js';
import { openRepository, type Repository } from '../git/repository.js';
import { listSessionRefs, readSnapshot, reviewRef, sessionHeadRef, snapshotRef, takeSnapshot, type Snapshot } from '../git/snapshots.js';
import { conflictMessage, describeMove, moveTree } from '../git/treeMove.js';
import { acquireReviewLock } from '../loop/repositoryLock.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import type { ReviewActionOutcome } from '../sessionFormat/reviewRecords.js';
import { appendReviewRecord } from '../sessionWriter/reviewRecorder.js';
import { readReview } from '../sessions/reviewState.js';
import { readReviewRecords } from '../sessions/sidecarReader.js';
import { takeHead, takeTail } from '../text/truncate.js';

/**
 * Reviewing an iteration hunk by hunk, as in a pull request: list its hunks, reject
 * one (undo it in the working tree, surgically: conflict-checked against what is
 * there now, the tree snapshotted first, no other hunk, the index or HEAD touched),
 * undo a rejection, and put an iteration's changes, or the session's, into the
 * user's index. Each is recorded in the session's `review.jsonl`; a rejection, with
 * the user's reason, is told to the next actor run.
 */

export interface ReviewTarget {
  sessionId: string;
  /** The session's `working_dir`: the repository that holds its snapshots. */
  workingDir: string;
  /** The session's sidecar folder, where the review is recorded. */
  sidecarDirectory: string;
}

export class HunkNotFoundError extends CodeloopsError {
  override name = 'HunkNotFoundError';
  constructor(message: string, details: Record<string, unknown>) {
    super('hunk_not_found', message, details);
  }
}

/** The iteration's change, from its snapshot before the actor to the one after, as files and hunks. */
export async function iterationHunks(target: ReviewTarget, iteration: number): Promise<FilePatch[] | undefined> {
  const repository = await openRepository(target.workingDir);
  const pair = await snapshotsOf(repository, target.sessionId, iteration);
  return pair ? diffHunks(repository, pair.pre.commit, pair.post.commit) : undefined;
}

async function snapshotsOf(repository: Repository, sessionId: string, iteration: number): Promise<{ pre: Snapshot; post: Snapshot } | undefined> {
  const [pre, post] = await Promise.all([
    readSnapshot(repository, snapshotRef(sessionId, iteration, 'pre')),
    readSnapshot(repository, snapshotRef(sessionId, iteration, 'post')),
  ]);
  return pre && post ? { pre, post } : undefined;
}

/** How much of a rejected hunk the record keeps (and the actor is shown). */
const KEPT_HUNK_CHARS = 6_000;

/** Undoes one hunk of an iteration in the working tree; the reason goes to the next actor run. */
export async function rejectHunk(target: ReviewTarget & { iteration: number; hunk: number; reason: string | null }): Promise<ReviewActionOutcome> {
  const repository = await openRepository(target.workingDir);
  const lock = acquireReviewLock(repository);
  try {
    const base = outcome(target.sessionId, { iteration: target.iteration, hunk: target.hunk });
    const pair = await snapshotsOf(repository, target.sessionId, target.iteration);
    if (!pair)
      return {
        ...base,
        result: 'snapshot_missing',
        message: `The snapshots of iteration ${target.iteration} of session ${target.sessionId} are gone from ${repository.root}. Nothing was changed.`,
      };
    const files = await diffHunks(repository, pair.pre.commit, pair.post.commit);
    const hunk = files.flatMap((file) => file.hunks).find((candidate) => candidate.number === target.hunk);
    if (!hunk) {
      const count = files.reduce((sum, file) => sum + file.hunks.length, 0);
      throw new HunkNotFoundError(
        `Iteration ${target.iteration} of session ${target.sessionId} has ${count === 0 ? 'no hunks' : `hunks 1–${count}`}, not ${target.hunk}.`,
        {
          iteration: target.iteration,
          hunk: target.hunk,
          hunks: count,
        },
      );
    }
    // The rejection's id, unique over the sessions a resume chains: iteration numbers carry on.
    const earlier = (await readReviewRecords(target.sidecarDirectory)).filter(
      (record) => record.type === 'hunk_rejected' && record.iteration === target.iteration,
    );
    const id = `R${target.iteration}.${earlier.length + 1}`;
    const before = reviewRef(target.sessionId, id, 'before');
    const after = reviewRef(target.sessionId, id, 'after');
    const message = `codeloops ${target.sessionId} reject ${id}: hunk ${target.hunk} of iteration ${target.iteration}`;
    const applied = await applyPatch(repository, hunk.patch, {
      target: 'worktree',
      reverse: true,
      // Saved once the hunk is known to apply, before a byte is written: the undo goes back to it.
      beforeWriting: async () => void (await takeSnapshot(repository, `${message} (the tree before)`, [before])),
    });
    if (!applied.applied) {
      return {
        ...base,
        result: 'conflict',
        conflicts: [hunk.path],
        message: `Changed nothing: hunk ${target.hunk} of iteration ${target.iteration} (${hunk.path}) no longer matches the file as it is now, so it cannot be undone on its own. ${applied.reason}`,
      };
    }
    // The session's head follows: codeloops left the tree so (resume does not take this for the user's edit).
    await takeSnapshot(repository, message, [after, sessionHeadRef(target.sessionId)]);
    appendReviewRecord(target.sidecarDirectory, {
      type: 'hunk_rejected',
      id,
      iteration: target.iteration,
      hunk: target.hunk,
      file: hunk.path,
      patch: keptHunk(hunk),
      reason: target.reason,
      before_ref: before,
      after_ref: after,
    });
    return {
      ...base,
      result: 'rejected',
      id,
      files: [hunk.path],
      saved_ref: before,
      message: `Undid hunk ${target.hunk} of iteration ${target.iteration} in ${hunk.path} (${id}); the next actor run is told${target.reason ? ' why' : ''}. It can be undone.`,
    };
  } finally {
    lock.release();
  }
}

function keptHunk(hunk: Hunk): string {
  return hunk.text.length <= KEPT_HUNK_CHARS ? hunk.text : `${takeHead(hunk.text, KEPT_HUNK_CHARS / 2)}\n…\n${takeTail(hunk.text, KEPT_HUNK_CHARS / 2)}`;
}

/** Puts a rejected hunk back (the latest rejection of the session when no id is given), conflict-checked like a rollback's undo. */
export async function undoRejection(target: ReviewTarget & { id?: string; force?: boolean | readonly string[] }): Promise<ReviewActionOutcome> {
  const repository = await openRepository(target.workingDir);
  const lock = acquireReviewLock(repository);
  try {
    const review = await readReview([target.sidecarDirectory]);
    const live = review.rejections.filter((item) => !item.undone);
    const item = target.id === undefined ? live.at(-1) : review.rejections.find((candidate) => candidate.rejection.id === target.id);
    const base = outcome(target.sessionId, { iteration: item?.rejection.iteration ?? null, hunk: item?.rejection.hunk ?? null });
    if (!item) {
      if (target.id !== undefined)
        throw new CodeloopsError('review_item_not_found', `Session ${target.sessionId} has no rejected hunk ${target.id}.`, { id: target.id });
      return { ...base, result: 'nothing_to_do', message: `Session ${target.sessionId} has no rejected hunk to undo. Nothing was changed.` };
    }
    const { rejection } = item;
    if (item.undone) return { ...base, id: rejection.id, result: 'nothing_to_do', message: `${rejection.id} is already undone. Nothing was changed.` };
    const [before, after] = await Promise.all([readSnapshot(repository, rejection.before_ref), readSnapshot(repository, rejection.after_ref)]);
    if (!before || !after) {
      return {
        ...base,
        id: rejection.id,
        result: 'snapshot_missing',
        message: `The snapshots of ${rejection.id} are gone from ${repository.root}. Nothing was changed.`,
      };
    }
    const refs = await listSessionRefs(repository, target.sessionId);
    const message = `codeloops ${target.sessionId} undo ${rejection.id}`;
    const moved = await moveTree(repository, {
      from: after,
      to: before,
      force: target.force ?? false,
      saveCurrentAs: reviewRef(target.sessionId, rejection.id, 'replaced'),
      // The session's head moves with it only if the rejection was the last thing codeloops did to the tree.
      afterRefs: [
        reviewRef(target.sessionId, rejection.id, 'undone'),
        ...(refs.get(sessionHeadRef(target.sessionId)) === after.commit ? [sessionHeadRef(target.sessionId)] : []),
      ],
      message,
      dryRun: false,
    });
    if (moved.kind === 'conflict')
      return { ...base, id: rejection.id, result: 'conflict', conflicts: moved.lists.conflicts, message: conflictMessage(moved.lists, `undo ${rejection.id}`) };
    if (moved.kind === 'nothing')
      return { ...base, id: rejection.id, result: 'nothing_to_do', message: `The hunk of ${rejection.id} is already in the tree. Nothing was changed.` };
    const restored = [...moved.lists.restored, ...moved.lists.removed];
    appendReviewRecord(target.sidecarDirectory, { type: 'rejection_undone', id: rejection.id, restored });
    return {
      ...base,
      id: rejection.id,
      result: 'rejection_undone',
      files: restored,
      saved_ref: reviewRef(target.sessionId, rejection.id, 'replaced'),
      message: `Undid ${rejection.id}: ${describeMove(moved.lists)}. It is no longer told to the actor.`,
    };
  } finally {
    lock.release();
  }
}

/**
 * Puts exactly an iteration's changes (or, without one, the whole session's: from
 * before its first iteration to the tree it left) into the user's index, and only
 * the index: the user's own unstaged edits stay where they are. It applies only on
 * top of what the index has for those files now; otherwise nothing is staged.
 */
export async function stageChanges(target: ReviewTarget & { iteration: number | null }): Promise<ReviewActionOutcome> {
  const repository = await openRepository(target.workingDir);
  const base = outcome(target.sessionId, { iteration: target.iteration, hunk: null });
  const range = await stagingRange(repository, target.sessionId, target.iteration);
  if (!range) {
    return {
      ...base,
      result: 'snapshot_missing',
      message: `The snapshots of ${target.iteration === null ? 'session' : `iteration ${target.iteration} of session`} ${target.sessionId} are gone from ${repository.root}. Nothing was staged.`,
    };
  }
  const { patch, files } = await diffPatch(repository, range.from.commit, range.to.commit);
  const what = target.iteration === null ? `session ${target.sessionId}` : `iteration ${target.iteration}`;
  if (files.length === 0) return { ...base, result: 'nothing_to_do', message: `${what} changed no files. Nothing was staged.` };
  const applied = await applyPatch(repository, patch, { target: 'index' });
  if (!applied.applied) {
    return {
      ...base,
      result: 'conflict',
      conflicts: files.map((file) => file.path),
      message: `Staged nothing: the changes of ${what} do not apply to what your index has for those files (stage the iterations before it first, or the whole session). ${applied.reason}`,
    };
  }
  const paths = files.map((file) => file.path);
  appendReviewRecord(target.sidecarDirectory, { type: 'staged', iteration: target.iteration, files: paths });
  return {
    ...base,
    result: 'staged',
    files: paths,
    message: `Staged the changes of ${what} (${paths.length} file${paths.length === 1 ? '' : 's'}); your unstaged edits are untouched.`,
  };
}

/** From before the iteration to after it; for the whole session, from before its first iteration to the tree it left. */
async function stagingRange(repository: Repository, sessionId: string, iteration: number | null): Promise<{ from: Snapshot; to: Snapshot } | undefined> {
  if (iteration !== null) {
    const pair = await snapshotsOf(repository, sessionId, iteration);
    return pair ? { from: pair.pre, to: pair.post } : undefined;
  }
  const refs = await listSessionRefs(repository, sessionId);
  const first = [...refs.keys()]
    .map((ref) => /\/(\d+)\/pre$/.exec(ref)?.[1])
    .filter((number): number is string => number !== undefined)
    .map(Number)
    .sort((a, b) => a - b)[0];
  if (first === undefined) return undefined;
  const [from, to] = await Promise.all([readSnapshot(repository, snapshotRef(sessionId, first, 'pre')), readSnapshot(repository, sessionHeadRef(sessionId))]);
  return from && to ? { from, to } : undefined;
}

function outcome(sessionId: string, where: { iteration: number | null; hunk: number | null }): ReviewActionOutcome {
  return {
    result: 'nothing_to_do',
    message: '',
    session_id: sessionId,
    iteration: where.iteration,
    hunk: where.hunk,
    id: null,
    files: [],
    conflicts: [],
    saved_ref: null,
  };
}
