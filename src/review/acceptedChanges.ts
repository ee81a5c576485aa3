import { withReviewLock } from '../loop/reviewLock.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import type { ProtectedChange } from '../sessionFormat/verification.js';
import type { ReviewRecordOf } from '../sessionFormat/reviewRecords.js';
import type { RunEvent, RunEventOf } from '../sessionFormat/runEvents.js';
import { appendReviewRecord } from '../sessionWriter/reviewRecorder.js';
import { acceptedChanges, acceptedTests } from '../sessions/reviewState.js';
import { readReviewRecords, readSidecarEvents } from '../sessions/sidecarReader.js';
import type { SessionReviewTarget } from './reviewTarget.js';

/**
 * The user lets a protected change stand: the actor deleted, removed or skipped a
 * test, or changed what a check runs, and the task needed it. Recorded in the
 * review record (the loop reads it before every verdict, a resumed run too), told to
 * the critic with the reason, and undoable.
 */

export interface AcceptRequest {
  iteration: number;
  file: string;
  reason: string | null;
}

export async function acceptProtectedChange(
  target: Pick<SessionReviewTarget, 'sessionId' | 'sidecarDir' | 'chainSidecarDirs'>,
  request: AcceptRequest,
): Promise<{ record: ReviewRecordOf<'change_accepted'>; changes: ProtectedChange[] }> {
  const reason = request.reason?.trim() || null;
  return withReviewLock(target.sidecarDir, async () => {
    const standing = await protectedChangesOf(target.chainSidecarDirs, request.iteration);
    const changes = standing.filter((event) => event.change.file === request.file).map((event) => event.change);
    if (changes.length === 0) {
      const files = [...new Set(standing.map((event) => event.change.file))];
      throw new CodeloopsError(
        'review_item_not_found',
        `Iteration ${request.iteration} of session ${target.sessionId} has no protected change of ${request.file}` +
          (files.length > 0 ? ` (it has: ${files.join(', ')}).` : ': nothing the checks rest on was changed then.'),
        { iteration: request.iteration, file: request.file },
      );
    }
    const record = appendReviewRecord(target.sidecarDir, {
      type: 'change_accepted',
      iteration: request.iteration,
      file: request.file,
      kinds: [...new Set(changes.map((change) => change.kind))],
      reason,
    });
    return { record: record as ReviewRecordOf<'change_accepted'>, changes };
  });
}

/** Takes an acceptance back: the change refuses DONE again while it stands. False when the file had none. */
export async function undoAcceptance(target: Pick<SessionReviewTarget, 'sidecarDir' | 'chainSidecarDirs'>, file: string): Promise<boolean> {
  return withReviewLock(target.sidecarDir, async () => {
    const records = (await Promise.all(target.chainSidecarDirs.map((dir) => readReviewRecords(dir)))).flat();
    if (!acceptedChanges(records).has(file)) return false;
    appendReviewRecord(target.sidecarDir, { type: 'acceptance_undone', file });
    return true;
  });
}

/** The protected changes recorded on an iteration (the chain's: its number is unique over it). */
async function protectedChangesOf(sidecarDirs: readonly string[], iteration: number): Promise<RunEventOf<'protected_change'>[]> {
  const keep = (event: RunEvent) => (event.type === 'protected_change' && event.iteration === iteration ? event : undefined);
  const events = (await Promise.all(sidecarDirs.map((dir) => readSidecarEvents(dir, undefined, keep)))).flat();
  return events.filter((event): event is RunEventOf<'protected_change'> => event.type === 'protected_change');
}

/**
 * The user lets one of the start's tests fail on the final code (`codeloops accept
 * --test`): the oracle named it (`test_oracle`) in this session or one it carries on.
 */
export async function acceptStartTest(
  target: Pick<SessionReviewTarget, 'sessionId' | 'sidecarDir' | 'chainSidecarDirs'>,
  request: { id: string; reason: string | null },
): Promise<ReviewRecordOf<'test_accepted'>> {
  const reason = request.reason?.trim() || null;
  return withReviewLock(target.sidecarDir, async () => {
    const named = await oracleFindingsOf(target.chainSidecarDirs);
    if (!named.has(request.id)) {
      const ids = [...named].slice(0, 10);
      throw new CodeloopsError(
        'review_item_not_found',
        `Session ${target.sessionId} has no start test ${request.id} that failed on the final code` +
          (ids.length > 0 ? ` (it has: ${ids.join(', ')}${named.size > ids.length ? ', …' : ''}).` : ": the start's tests never refused a DONE in it."),
        { test: request.id },
      );
    }
    return appendReviewRecord(target.sidecarDir, { type: 'test_accepted', id: request.id, reason }) as ReviewRecordOf<'test_accepted'>;
  });
}

/** Takes a test's acceptance back: it refuses DONE again while it fails. False when it was not accepted. */
export async function undoTestAcceptance(target: Pick<SessionReviewTarget, 'sidecarDir' | 'chainSidecarDirs'>, id: string): Promise<boolean> {
  return withReviewLock(target.sidecarDir, async () => {
    const records = (await Promise.all(target.chainSidecarDirs.map((dir) => readReviewRecords(dir)))).flat();
    if (!acceptedTests(records).has(id)) return false;
    appendReviewRecord(target.sidecarDir, { type: 'test_acceptance_undone', id });
    return true;
  });
}

/** The ids of the start's tests the oracle found wanting, over the chain. */
async function oracleFindingsOf(sidecarDirs: readonly string[]): Promise<Set<string>> {
  const keep = (event: RunEvent) => (event.type === 'test_oracle' ? event : undefined);
  const events = (await Promise.all(sidecarDirs.map((dir) => readSidecarEvents(dir, undefined, keep)))).flat();
  return new Set(
    events.flatMap((event) =>
      event.type === 'test_oracle' ? [...event.findings.map((finding) => finding.id), ...event.accepted.map((each) => each.finding.id)] : [],
    ),
  );
}
