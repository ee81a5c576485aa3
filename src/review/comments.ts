import { withReviewLock } from '../loop/reviewLock.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import type { ReviewRecordOf } from '../sessionFormat/reviewRecords.js';
import { appendReviewRecord } from '../sessionWriter/reviewRecorder.js';
import { readReview } from '../sessions/reviewState.js';
import { repositoryPath } from '../text/humanize.js';
import type { SessionReviewTarget } from './reviewTarget.js';

/**
 * The user's own review: comments on an iteration's code (or on the session), and
 * findings or comments marked resolved (or open again). Open comments go into every
 * actor prompt, marked as the user's, until the user or the critic resolves them.
 */

export interface CommentRequest {
  iteration: number | null;
  file: string | null;
  line: number | null;
  endLine: number | null;
  text: string;
}

export async function addComment(
  target: Pick<SessionReviewTarget, 'sidecarDir' | 'lastIteration'>,
  request: CommentRequest,
): Promise<ReviewRecordOf<'comment'>> {
  const text = request.text.trim();
  if (text === '') throw new CodeloopsError('usage', 'The comment is empty.');
  if (request.line !== null && request.line < 1) throw new CodeloopsError('usage', `Line ${request.line} is not a line: lines count from 1.`);
  if (request.line === null && request.endLine !== null) throw new CodeloopsError('usage', 'An end line needs a line to start from.');
  if (request.line !== null && request.endLine !== null && request.endLine < request.line) {
    throw new CodeloopsError('usage', `The comment's lines run backwards (${request.line} to ${request.endLine}).`);
  }
  if (request.line !== null && request.file === null) throw new CodeloopsError('usage', 'A line needs the file it is in.');
  return withReviewLock(target.sidecarDir, async () => {
    // `U<iteration>.<n>`: unique over the sessions a resume chains, since iteration numbers carry on.
    const on = request.iteration ?? target.lastIteration;
    const earlier = (await readReview([target.sidecarDir])).comments.filter((comment) => comment.id.startsWith(`U${on}.`));
    const record = appendReviewRecord(target.sidecarDir, {
      type: 'comment',
      id: `U${on}.${earlier.length + 1}`,
      iteration: request.iteration,
      file: request.file === null ? null : repositoryPath(request.file),
      line: request.line,
      end_line: request.line === null ? null : (request.endLine ?? request.line),
      text,
    });
    return record as ReviewRecordOf<'comment'>;
  });
}

/**
 * Marks a finding or a comment resolved (or open again): any of the session's, or of
 * the sessions it carries on (their open items are its own). Recorded with the session.
 */
export async function setResolved(
  target: Pick<SessionReviewTarget, 'sessionId' | 'sidecarDir' | 'chainSidecarDirs'>,
  id: string,
  resolved: boolean,
): Promise<void> {
  await withReviewLock(target.sidecarDir, async () => {
    const review = await readReview(target.chainSidecarDirs);
    const item = [...review.findings, ...review.comments].find((candidate) => candidate.id === id);
    if (!item) throw new CodeloopsError('review_item_not_found', `Session ${target.sessionId} has no finding or comment ${id}.`, { id });
    if (item.open !== resolved) return; // already so
    appendReviewRecord(target.sidecarDir, { type: resolved ? 'resolved' : 'reopened', id });
  });
}
