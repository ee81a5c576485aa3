import { acceptProtectedChange, acceptStartTest, undoAcceptance, undoTestAcceptance } from '../../review/acceptedChanges.js';
import { addComment, setResolved } from '../../review/comments.js';
import type * as HunkReviewModule from '../../review/hunkReview.js';
import { reviewTargetOf, type SessionReviewTarget } from '../../review/reviewTarget.js';
import { isCodeloopsError } from '../../sessionFormat/failures.js';
import { protectedChangeText } from '../../sessionFormat/verification.js';
import type { ReviewActionOutcome, ReviewRecordOf } from '../../sessionFormat/reviewRecords.js';
import type { SessionStore } from '../../sessions/sessionStore.js';
import type { EditorWindow, RunLog } from '../editorPorts.js';

/**
 * Review as the editor offers it: reject a hunk (with a reason for the next actor
 * run, and an Undo at once), stage an iteration's changes, comment, resolve. The
 * engine does the work and checks every move; these functions ask and tell.
 */
/** What the editor does with an iteration's hunks (`review/hunkReview.ts`): `dist/review.js`, loaded when first used (extension.ts). */
export type HunkReview = Pick<typeof HunkReviewModule, 'iterationHunks' | 'rejectHunk' | 'undoRejection' | 'stageChanges'>;

export interface ReviewCommandsDeps {
  store: SessionStore;
  hunks: HunkReview;
  window: EditorWindow;
  log: RunLog;
  /** A session's sidecar folder, where its review is recorded. */
  sidecarDirOf: (sessionId: string) => string;
  /** Called after the files or the review changed, so the tree, viewers and comment threads show it. */
  changed: (sessionId: string) => void;
}

function targetOf(deps: ReviewCommandsDeps, sessionId: string): Promise<SessionReviewTarget> {
  return reviewTargetOf(deps.store, deps.sidecarDirOf, sessionId);
}

/** Runs a review action; a refusal (a loop at work, a hunk that is gone) is said, not thrown. */
async function act(deps: ReviewCommandsDeps, work: () => Promise<ReviewActionOutcome>): Promise<ReviewActionOutcome | undefined> {
  try {
    return await work();
  } catch (error) {
    if (!isCodeloopsError(error)) throw error;
    const advice = error.code === 'loop_running' ? ' (Review while the loop is paused for review, or once it has ended.)' : '';
    void deps.window.showWarning(`Codeloops: ${error.message}${advice}`);
    return undefined;
  }
}

/** Tells how an action went: done (the views refresh), or why not (nothing changed). */
function report(deps: ReviewCommandsDeps, sessionId: string, outcome: ReviewActionOutcome, done: ReviewActionOutcome['result']): boolean {
  if (outcome.result !== done) {
    deps.log.warn(outcome.message);
    void deps.window.showWarning(`Codeloops: ${outcome.message}`);
    return false;
  }
  deps.changed(sessionId);
  return true;
}

export async function rejectHunkCommand(
  deps: ReviewCommandsDeps,
  sessionId: string,
  iteration: number,
  hunk: number,
): Promise<ReviewActionOutcome | undefined> {
  const reason = await deps.window.input(
    `Reject hunk ${hunk} of iteration ${iteration}: it is undone in your files, and the next actor run is told why.`,
    'Why? (optional: what should it do instead)',
  );
  if (reason === undefined) return undefined; // cancelled
  const outcome = await act(deps, async () => deps.hunks.rejectHunk({ ...(await targetOf(deps, sessionId)), iteration, hunk, reason: reason.trim() || null }));
  if (outcome && report(deps, sessionId, outcome, 'rejected')) {
    const undo = 'Undo';
    void deps.window.showInfo(`Codeloops: ${outcome.message}`, undo).then((choice) => {
      if (choice === undo) void undoRejectionCommand(deps, sessionId, outcome.id ?? undefined);
    });
  }
  return outcome;
}

export async function undoRejectionCommand(deps: ReviewCommandsDeps, sessionId: string, id?: string): Promise<ReviewActionOutcome | undefined> {
  const outcome = await act(deps, async () => deps.hunks.undoRejection({ ...(await targetOf(deps, sessionId)), id }));
  if (outcome && report(deps, sessionId, outcome, 'rejection_undone')) void deps.window.showInfo(`Codeloops: ${outcome.message}`);
  return outcome;
}

/** Stages one iteration's changes, or the whole session's (`iteration` null). */
export async function stageCommand(deps: ReviewCommandsDeps, sessionId: string, iteration: number | null): Promise<ReviewActionOutcome | undefined> {
  const outcome = await act(deps, async () => deps.hunks.stageChanges({ ...(await targetOf(deps, sessionId)), iteration }));
  if (outcome && report(deps, sessionId, outcome, 'staged')) void deps.window.showInfo(`Codeloops: ${outcome.message}`);
  return outcome;
}

export interface CommentTarget {
  sessionId: string;
  iteration: number | null;
  file: string | null;
  line: number | null;
  endLine: number | null;
}

/** Leaves the user's comment; the next actor run is told, until it is resolved. */
export async function commentCommand(deps: ReviewCommandsDeps, where: CommentTarget, text: string): Promise<string | undefined> {
  try {
    const comment = await addComment(await targetOf(deps, where.sessionId), { ...where, text });
    deps.changed(where.sessionId);
    return comment.id;
  } catch (error) {
    if (!isCodeloopsError(error)) throw error;
    void deps.window.showWarning(`Codeloops: ${error.message}`);
    return undefined;
  }
}

/** Marks a finding or comment resolved (or open again); a refusal (no such item, busy) is said. */
export async function resolveCommand(deps: ReviewCommandsDeps, sessionId: string, id: string, resolved: boolean): Promise<void> {
  try {
    await setResolved(await targetOf(deps, sessionId), id, resolved);
    deps.changed(sessionId);
  } catch (error) {
    if (!isCodeloopsError(error)) throw error;
    void deps.window.showWarning(`Codeloops: ${error.message}`);
  }
}

export interface AcceptChangeDeps extends ReviewCommandsDeps {
  /** Whether the workspace is trusted, asking the user to trust it when not (`LoopStarter.ensureTrusted`). */
  ensureTrusted(action: string, why: string): Promise<boolean>;
}

/**
 * Accepts a protected change the actor made (a test skipped, a check's command
 * changed): it no longer refuses DONE, the critic is told the reason asked for here,
 * and Undo takes it back at once. No file changes, but what a loop accepts as done
 * does: like the review actions that change files, only in a trusted workspace.
 */
export async function acceptChangeCommand(
  deps: AcceptChangeDeps,
  sessionId: string,
  iteration: number,
  file: string,
): Promise<ReviewRecordOf<'change_accepted'> | undefined> {
  if (!(await deps.ensureTrusted('accept a protected change', 'it changes what a loop here accepts as done'))) return undefined;
  const reason = await deps.window.input(
    `Accept the change of ${file} in iteration ${iteration}: it no longer refuses DONE, and the critic is told your reason.`,
    'Why? (optional: told to the critic)',
  );
  if (reason === undefined) return undefined; // cancelled
  try {
    const { record, changes } = await acceptProtectedChange(await targetOf(deps, sessionId), { iteration, file, reason });
    deps.changed(sessionId);
    const undo = 'Undo';
    const told = record.reason ? '; the critic is told why' : '';
    void deps.window.showInfo(`Codeloops: accepted ${changes.map(protectedChangeText).join('; ')}. It no longer refuses DONE${told}.`, undo).then((choice) => {
      if (choice === undo) void undoAcceptanceCommand(deps, sessionId, file);
    });
    return record;
  } catch (error) {
    if (!isCodeloopsError(error)) throw error;
    void deps.window.showWarning(`Codeloops: ${error.message}`);
    return undefined;
  }
}

/** Takes an acceptance back: while the change stands, DONE is refused again. */
export async function undoAcceptanceCommand(deps: ReviewCommandsDeps, sessionId: string, file: string): Promise<boolean> {
  const undone = await undoAcceptance(await targetOf(deps, sessionId), file);
  if (!undone) {
    void deps.window.showWarning(`Codeloops: ${file} was not accepted.`);
    return false;
  }
  deps.changed(sessionId);
  void deps.window.showInfo(`Codeloops: ${file} is no longer accepted: while its change stands, DONE is refused.`);
  return true;
}

/**
 * Accepts one of the start's tests that the oracle found failing on the final code
 * (the task changes what it expects): it no longer refuses DONE, the critic is told the
 * reason, and Undo takes it back. Only in a trusted workspace, as accepting a change.
 */
export async function acceptTestCommand(deps: AcceptChangeDeps, sessionId: string, test: string): Promise<ReviewRecordOf<'test_accepted'> | undefined> {
  if (!(await deps.ensureTrusted('accept a start test', 'it changes what a loop here accepts as done'))) return undefined;
  const reason = await deps.window.input(
    `Accept the start's test ${test} failing on the final code: it no longer refuses DONE, and the critic is told your reason.`,
    'Why? (optional: told to the critic)',
  );
  if (reason === undefined) return undefined; // cancelled
  try {
    const target = await targetOf(deps, sessionId);
    const record = await acceptStartTest(target, { id: test, reason });
    deps.changed(sessionId);
    const undo = 'Undo';
    void deps.window
      .showInfo(`Codeloops: accepted the start's test ${test} failing. It no longer refuses DONE${record.reason ? '; the critic is told why' : ''}.`, undo)
      .then((choice) => {
        if (choice !== undo) return;
        void undoTestAcceptance(target, test).then((undone) => {
          if (undone) deps.changed(sessionId);
        });
      });
    return record;
  } catch (error) {
    if (!isCodeloopsError(error)) throw error;
    void deps.window.showWarning(`Codeloops: ${error.message}`);
    return undefined;
  }
}
