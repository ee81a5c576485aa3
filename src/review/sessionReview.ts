import type { SessionReview } from '../sessionFormat/reviewRecords.js';
import { readReview, reviewItems } from '../sessions/reviewState.js';
import { iterationHunks, type ReviewTarget } from './hunkReview.js';

/**
 * A session's review as one record: each iteration's hunks, numbered as `reject`
 * takes them, and every finding, comment, rejection and staging with where it
 * stands. What `codeloops review` prints and the viewers show.
 */
export async function sessionReview(target: ReviewTarget, iterations: readonly number[]): Promise<SessionReview> {
  const [state, hunks] = await Promise.all([
    readReview([target.sidecarDirectory]),
    Promise.all(
      iterations.map(async (iteration) => {
        const files = await iterationHunks(target, iteration).catch(() => undefined);
        return {
          iteration,
          hunks:
            files?.flatMap((file) =>
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
            ) ?? null,
        };
      }),
    ),
  ]);
  return { session_id: target.sessionId, iterations: hunks, ...reviewItems(state) };
}
