import { openRepository } from '../git/repository.js';
import { diffHunks } from '../git/hunks.js';
import { readSnapshot, snapshotRef } from '../git/snapshots.js';
import { mapWithLimit } from '../process/concurrency.js';
import type { ReviewHunk, SessionReview } from '../sessionFormat/reviewRecords.js';
import { readReview } from '../sessions/reviewState.js';
import type { SessionReviewTarget } from './reviewTarget.js';

/** How many iterations' diffs are taken at once (each is two git processes). */
const CONCURRENT_ITERATIONS = 4;

/**
 * A session's review as one record: each iteration's hunks, numbered as `reject`
 * takes them, and every finding, comment, rejection and staging with where it
 * stands, the open ones of the sessions it carries on included. What `codeloops
 * review` prints.
 */
export async function sessionReview(target: SessionReviewTarget, iterations: readonly number[]): Promise<SessionReview> {
  const repository = await openRepository(target.workingDir).catch(() => undefined);
  const hunksOf = async (iteration: number): Promise<ReviewHunk[] | null> => {
    if (!repository) return null;
    const [pre, post] = await Promise.all(
      ['pre', 'post'].map((side) => readSnapshot(repository, snapshotRef(target.sessionId, iteration, side as 'pre' | 'post'))),
    );
    if (!pre || !post) return null;
    return (await diffHunks(repository, pre.commit, post.commit)).flatMap((file) =>
      file.hunks.map((hunk) => ({
        number: hunk.number,
        file: file.path,
        status: file.status,
        binary: file.binary,
        old_start: hunk.oldStart,
        old_lines: hunk.oldLines,
        new_start: hunk.newStart,
        new_lines: hunk.newLines,
        text: hunk.text,
      })),
    );
  };
  const hunks = await mapWithLimit(iterations, CONCURRENT_ITERATIONS, async (iteration) => ({ iteration, hunks: await hunksOf(iteration) }));
  return { session_id: target.sessionId, iterations: hunks, ...(await readReview(target.chainSidecarDirs)) };
}
