import { applyHunk, applyPatch, diffHunks, missingHunks, treeWithout, type FilePatch, type Hunk } from '../git/hunks.js';
import { keepLineEndings } from '../git/exactBytes.js';
import { openRepository, type Repository } from '../git/repository.js';
import { listSessionRefs, readSnapshot, reviewRef, sessionHeadRef, snapshotIterations, snapshotRef, takeSnapshot, type Snapshot } from '../git/snapshots.js';
import { acquireReviewLock } from '../loop/repositoryLock.js';
import { withReviewLock } from '../loop/reviewLock.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import type { RejectionItem, ReviewActionOutcome } from '../sessionFormat/reviewRecords.js';
import { ReviewRecordFile } from '../sessionWriter/reviewRecorder.js';
import { readReview } from '../sessions/reviewState.js';
import { takeHead, takeTail } from '../text/truncate.js';
import type { ReviewTarget } from './reviewTarget.js';

/**
 * Reviewing an iteration hunk by hunk, as in a pull request: list its hunks, reject
 * one (undo it in the working tree, surgically: conflict-checked against what is
 * there now, the tree snapshotted first, no other hunk, the index or HEAD touched),
 * undo a rejection (the same hunk put back, checked the same way), and put an
 * iteration's changes, or the session's, into the user's index. Each is recorded in
 * the session's `review.jsonl`; a rejection, with the user's reason, is told to the
 * next actor run. One action at a time per session (`withReviewLock`), and none while
 * a loop is at work in the repository (only while it waits for the review).
 */

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

/** An iteration's hunk by its number, with its file, from the iteration's own snapshots (what `codeloops review` numbers). */
async function hunkOf(
  repository: Repository,
  sessionId: string,
  iteration: number,
  number: number,
): Promise<{ file: FilePatch; hunk: Hunk } | 'snapshot_missing'> {
  const pair = await snapshotsOf(repository, sessionId, iteration);
  if (!pair) return 'snapshot_missing';
  const files = await diffHunks(repository, pair.pre.commit, pair.post.commit);
  const hunks = files.flatMap((file) => file.hunks.map((hunk) => ({ file, hunk })));
  const found = hunks.find((candidate) => candidate.hunk.number === number);
  if (!found) {
    throw new HunkNotFoundError(
      `Iteration ${iteration} of session ${sessionId} has ${hunks.length === 0 ? 'no hunks' : `hunks 1–${hunks.length}`}, not ${number}.`,
      {
        iteration,
        hunk: number,
        hunks: hunks.length,
      },
    );
  }
  return found;
}

/** The hunks of a file that the user rejected in its iteration and did not put back: the file's lines as codeloops left them count without them. */
function rejectedIn(file: FilePatch, rejections: readonly RejectionItem[], iteration: number): Hunk[] {
  const numbers = new Set(rejections.filter((rejection) => rejection.iteration === iteration && !rejection.undone).map((rejection) => rejection.hunk));
  return file.hunks.filter((hunk) => numbers.has(hunk.number));
}

/** A nested repository's commit (a submodule, or a repository inside this one): `git apply` passes over it, so it is never undone here. */
function nestedRepository(base: ReviewActionOutcome, file: FilePatch, what: string): ReviewActionOutcome {
  return {
    ...base,
    result: 'conflict',
    conflicts: [file.path],
    message: `Changed nothing: ${what} is the commit of the nested repository ${file.path} (a submodule or a repository inside this one), which Codeloops does not change. Check out the commit you want inside it.`,
  };
}

/**
 * A change of the session's files on the user's behalf: one at a time on the session,
 * and with the repository's loop lock, or, while a loop holds it and waits for this
 * review, without (the loop takes the session's review lock before it goes on).
 */
async function changeFiles<T>(target: ReviewTarget, work: (repository: Repository, record: ReviewRecordFile) => Promise<T>): Promise<T> {
  return withReviewLock(target.sidecarDir, async () => {
    const repository = await openRepository(target.workingDir);
    const lock = acquireReviewLock(repository);
    try {
      // Opened before any file changes: a record that cannot be written stops the action while nothing has changed.
      const record = ReviewRecordFile.open(target.sidecarDir);
      try {
        return await work(repository, record);
      } finally {
        record.close();
      }
    } finally {
      lock.release();
    }
  });
}

/** How much of a rejected hunk the record keeps (and the actor is shown). */
const KEPT_HUNK_CHARS = 6_000;

/** Undoes one hunk of an iteration in the working tree; the reason goes to the next actor run. */
export async function rejectHunk(target: ReviewTarget & { iteration: number; hunk: number; reason: string | null }): Promise<ReviewActionOutcome> {
  return changeFiles(target, async (repository, record) => {
    const base = outcome(target.sessionId, { iteration: target.iteration, hunk: target.hunk });
    const found = await hunkOf(repository, target.sessionId, target.iteration, target.hunk);
    if (found === 'snapshot_missing') return snapshotMissing(base, repository, `iteration ${target.iteration} of session ${target.sessionId}`);
    const { file, hunk } = found;
    if (file.entry === 'gitlink') return nestedRepository(base, file, `hunk ${target.hunk} of iteration ${target.iteration}`);
    // The rejection's id, unique over the sessions a resume chains: iteration numbers carry on.
    const rejections = (await readReview([target.sidecarDir])).rejections;
    const earlier = rejections.filter((rejection) => rejection.iteration === target.iteration);
    const id = `R${target.iteration}.${earlier.length + 1}`;
    const before = reviewRef(target.sessionId, id, 'before');
    const after = reviewRef(target.sessionId, id, 'after');
    const message = `codeloops ${target.sessionId} reject ${id}: hunk ${target.hunk} of iteration ${target.iteration}`;
    let saved: Snapshot | undefined;
    const applied = await applyHunk(repository, file, hunk, {
      reverse: true,
      takenOut: rejectedIn(file, rejections, target.iteration).filter((other) => other !== hunk),
      // Saved once the hunk is known to apply, before a byte is written: the undo goes back to it.
      beforeWriting: async () => void (saved = await takeSnapshot(repository, `${message} (the tree before)`, [before])),
    });
    if (!applied.applied) {
      return {
        ...base,
        result: 'conflict',
        conflicts: [hunk.path],
        message: `Changed nothing: hunk ${target.hunk} of iteration ${target.iteration} (${hunk.path}) no longer matches the file as it is now, so it cannot be undone on its own. ${applied.reason}`,
      };
    }
    // git apply writes line endings as a checkout would; the file keeps those it had.
    if (saved) await keepLineEndings(repository, saved.commit, [file.rawPath]);
    // The session's head follows: codeloops left the tree so (resume does not take this for the user's edit).
    await takeSnapshot(repository, message, [after, sessionHeadRef(target.sessionId)]);
    record.append({
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
  });
}

function keptHunk(hunk: Hunk): string {
  return hunk.text.length <= KEPT_HUNK_CHARS ? hunk.text : `${takeHead(hunk.text, KEPT_HUNK_CHARS / 2)}\n…\n${takeTail(hunk.text, KEPT_HUNK_CHARS / 2)}`;
}

/**
 * Puts a rejected hunk back (the session's latest rejection when no id is given):
 * the same hunk applied again, so that anything changed since elsewhere in the file
 * stays, and a hunk whose lines changed since is a conflict that changes nothing.
 */
export async function undoRejection(target: ReviewTarget & { id?: string }): Promise<ReviewActionOutcome> {
  return changeFiles(target, async (repository, record) => {
    const rejections = (await readReview([target.sidecarDir])).rejections;
    const item: RejectionItem | undefined =
      target.id === undefined ? rejections.filter((rejection) => !rejection.undone).at(-1) : rejections.find((rejection) => rejection.id === target.id);
    const base = outcome(target.sessionId, { iteration: item?.iteration ?? null, hunk: item?.hunk ?? null });
    if (!item) {
      if (target.id !== undefined)
        throw new CodeloopsError('review_item_not_found', `Session ${target.sessionId} has no rejected hunk ${target.id}.`, { id: target.id });
      return { ...base, result: 'nothing_to_do', message: `Session ${target.sessionId} has no rejected hunk to undo. Nothing was changed.` };
    }
    if (item.undone) return { ...base, id: item.id, result: 'nothing_to_do', message: `${item.id} is already undone. Nothing was changed.` };
    const found = await hunkOf(repository, target.sessionId, item.iteration, item.hunk);
    if (found === 'snapshot_missing')
      return { ...snapshotMissing(base, repository, `iteration ${item.iteration} of session ${target.sessionId}`), id: item.id };
    const { file, hunk } = found;
    if (file.entry === 'gitlink') return { ...nestedRepository(base, file, item.id), id: item.id };
    const message = `codeloops ${target.sessionId} undo ${item.id}`;
    const replaced = reviewRef(target.sessionId, item.id, 'replaced');
    let saved: Snapshot | undefined;
    const applied = await applyHunk(repository, file, hunk, {
      reverse: false,
      takenOut: rejectedIn(file, rejections, item.iteration),
      beforeWriting: async () => void (saved = await takeSnapshot(repository, `${message} (the tree before)`, [replaced])),
    });
    if (!applied.applied) {
      return {
        ...base,
        id: item.id,
        result: 'conflict',
        conflicts: [hunk.path],
        message: `Changed nothing: the lines of ${item.id} in ${hunk.path} changed since it was rejected, so its hunk cannot be put back on its own. ${applied.reason}`,
      };
    }
    if (saved) await keepLineEndings(repository, saved.commit, [file.rawPath]);
    await takeSnapshot(repository, message, [reviewRef(target.sessionId, item.id, 'undone'), sessionHeadRef(target.sessionId)]);
    record.append({ type: 'rejection_undone', id: item.id, restored: [hunk.path] });
    return {
      ...base,
      id: item.id,
      result: 'rejection_undone',
      files: [hunk.path],
      saved_ref: replaced,
      message: `Put hunk ${item.hunk} of iteration ${item.iteration} back in ${hunk.path} (${item.id} undone). It is no longer told to the actor.`,
    };
  });
}

/**
 * Puts exactly an iteration's changes, less the hunks the user rejected (or, without
 * an iteration, the whole session's: from before its first iteration to the tree it
 * left) into the user's index, and only the index: the user's own unstaged edits
 * stay where they are. It applies only on top of what the index has for those files
 * now; otherwise nothing is staged.
 */
export async function stageChanges(target: ReviewTarget & { iteration: number | null }): Promise<ReviewActionOutcome> {
  return changeFiles(target, async (repository, record) => {
    const base = outcome(target.sessionId, { iteration: target.iteration, hunk: null });
    const what = target.iteration === null ? `session ${target.sessionId}` : `iteration ${target.iteration}`;
    const range = await stagingRange(repository, target, target.iteration);
    if (!range)
      return snapshotMissing(
        base,
        repository,
        target.iteration === null ? `session ${target.sessionId}` : `iteration ${target.iteration} of session ${target.sessionId}`,
      );
    const files = await diffHunks(repository, range.from, range.to);
    if (files.length === 0) return { ...base, result: 'nothing_to_do', message: `${what} changed no files. Nothing was staged.` };
    // Part of it may be staged already (an iteration, then the whole session): the rest is staged.
    const missing = await missingHunks(repository, files);
    const refused = (reason: string, conflicts: string[]): ReviewActionOutcome => ({
      ...base,
      result: 'conflict',
      conflicts,
      message: `Staged nothing: the changes of ${what} do not apply to what your index has for those files (stage the iterations before it first, or the whole session). ${reason}`,
    });
    if ('conflict' in missing && missing.unmerged) {
      return {
        ...base,
        result: 'conflict',
        conflicts: [missing.conflict],
        message: `Staged nothing: ${missing.conflict} has a merge conflict in your index. Resolve the conflict (and stage the file you resolved) first, then stage ${what}.`,
      };
    }
    if ('conflict' in missing) return refused(missing.reason, [missing.conflict]);
    if (missing.files.length === 0) return { ...base, result: 'nothing_to_do', message: `The changes of ${what} are staged already. Nothing was changed.` };
    const applied = await applyPatch(repository, missing.patch, { target: 'index' });
    if (!applied.applied) return refused(applied.reason, missing.files);
    const paths = missing.files;
    record.append({ type: 'staged', iteration: target.iteration, files: paths });
    return {
      ...base,
      result: 'staged',
      files: paths,
      message: `Staged the changes of ${what} (${paths.length} file${paths.length === 1 ? '' : 's'}); your unstaged edits are untouched.`,
    };
  });
}

/**
 * What is staged: an iteration from before to after it, without the hunks the user
 * rejected and did not put back; the whole session from before its first iteration
 * to the tree it left (its head, which follows rejections).
 */
async function stagingRange(repository: Repository, target: ReviewTarget, iteration: number | null): Promise<{ from: string; to: string } | undefined> {
  if (iteration !== null) {
    const pair = await snapshotsOf(repository, target.sessionId, iteration);
    if (!pair) return undefined;
    const rejected = (await readReview([target.sidecarDir])).rejections.filter((rejection) => rejection.iteration === iteration && !rejection.undone);
    if (rejected.length === 0) return { from: pair.pre.commit, to: pair.post.commit };
    const files = await diffHunks(repository, pair.pre.commit, pair.post.commit);
    const numbers = new Set(rejected.map((rejection) => rejection.hunk));
    const takenOut = files.flatMap((file) => file.hunks).filter((hunk) => numbers.has(hunk.number));
    return { from: pair.pre.commit, to: await treeWithout(repository, pair.post.commit, files, takenOut) };
  }
  const refs = await listSessionRefs(repository, target.sessionId);
  const first = snapshotIterations(refs, target.sessionId)[0];
  if (first === undefined) return undefined;
  const [from, to] = await Promise.all([
    readSnapshot(repository, snapshotRef(target.sessionId, first, 'pre')),
    readSnapshot(repository, sessionHeadRef(target.sessionId)),
  ]);
  return from && to ? { from: from.commit, to: to.commit } : undefined;
}

function snapshotMissing(base: ReviewActionOutcome, repository: Repository, what: string): ReviewActionOutcome {
  return { ...base, result: 'snapshot_missing', message: `The snapshots of ${what} are gone from ${repository.root}. Nothing was changed.` };
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
