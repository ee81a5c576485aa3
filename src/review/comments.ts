import { CodeloopsError } from '../sessionFormat/failures.js';
import type { ReviewRecordOf } from '../sessionFormat/reviewRecords.js';
import { appendReviewRecord } from '../sessionWriter/reviewRecorder.js';
import { readReview } from '../sessions/reviewState.js';
import { readReviewRecords } from '../sessions/sidecarReader.js';

/**
 * The user's own review: comments on an iteration's code (or on the session), and
 * findings or comments marked resolved (or open again). Open comments go into every
 * actor prompt, marked as the user's, until the user or the critic resolves them.
 */

export interface CommentRequest {
  sessionId: string;
  sidecarDirectory: string;
  /** The session's last iteration: a comment on the session as a whole is numbered after it. */
  lastIteration: number;
  iteration: number | null;
  file: string | null;
  line: number | null;
  endLine: number | null;
  text: string;
}

export async function addComment(request: CommentRequest): Promise<ReviewRecordOf<'comment'>> {
  const text = request.text.trim();
  if (text === '') throw new CodeloopsError('usage', 'The comment is empty.');
  if (request.line !== null && request.line < 1) throw new CodeloopsError('usage', `Line ${request.line} is not a line: lines count from 1.`);
  if (request.line === null && request.endLine !== null) throw new CodeloopsError('usage', 'An end line needs a line to start from.');
  if (request.line !== null && request.endLine !== null && request.endLine < request.line) {
    throw new CodeloopsError('usage', `The comment's lines run backwards (${request.line} to ${request.endLine}).`);
  }
  if (request.line !== null && request.file === null) throw new CodeloopsError('usage', 'A line needs the file it is in.');
  // `U<iteration>.<n>`: unique over the sessions a resume chains, since iteration numbers carry on.
  const on = request.iteration ?? request.lastIteration;
  const earlier = (await readReviewRecords(request.sidecarDirectory)).filter((record) => record.type === 'comment' && record.id.startsWith(`U${on}.`));
  const record = appendReviewRecord(request.sidecarDirectory, {
    type: 'comment',
    id: `U${on}.${earlier.length + 1}`,
    iteration: request.iteration,
    file: request.file === null ? null : request.file.replace(/\\/g, '/').replace(/^(\.\/)+/, ''),
    line: request.line,
    end_line: request.line === null ? null : (request.endLine ?? request.line),
    text,
  });
  return record as ReviewRecordOf<'comment'>;
}

/** Marks a finding or a comment resolved (or open again). */
export async function setResolved(request: { sessionId: string; sidecarDirectory: string; id: string; resolved: boolean }): Promise<void> {
  const review = await readReview([request.sidecarDirectory]);
  const item =
    review.findings.find((candidate) => candidate.finding.id === request.id) ?? review.comments.find((candidate) => candidate.comment.id === request.id);
  if (!item) {
    throw new CodeloopsError('review_item_not_found', `Session ${request.sessionId} has no finding or comment ${request.id}.`, { id: request.id });
  }
  if (item.open !== request.resolved) return; // already so
  appendReviewRecord(request.sidecarDirectory, { type: request.resolved ? 'resolved' : 'reopened', id: request.id });
}
