import { addComment, setResolved } from '../../review/comments.js';
import { rejectHunk, stageChanges, undoRejection, type ReviewTarget } from '../../review/hunkReview.js';
import { isCodeloopsError } from '../../sessionFormat/failures.js';
import type { ReviewActionOutcome } from '../../sessionFormat/reviewRecords.js';
import { sidecarDir } from '../../sessionFormat/sessionFiles.js';
import type { SessionStore } from '../../sessions/sessionStore.js';
import type { EditorWindow, RunLog } from '../editorPorts.js';

/**
 * Review as the editor offers it: reject a hunk (with a reason for the next actor
 * run, and an Undo at once), stage an iteration's changes, comment, resolve. The
 * engine does the work and checks every move; these functions ask and tell.
 */
export interface ReviewCommandsDeps {
  store: SessionStore;
  window: EditorWindow;
  log: RunLog;
  /** Called after the files or the review changed, so the tree, viewers and comment threads show it. */
  changed: (sessionId: string) => void;
}

async function targetOf(deps: ReviewCommandsDeps, sessionId: string): Promise<ReviewTarget & { lastIteration: number }> {
  const session = await deps.store.load(sessionId);
  return {
    sessionId,
    workingDir: session.start.working_dir,
    sidecarDirectory: sidecarDir(sessionId),
    lastIteration: session.iterations.at(-1)?.iteration_number ?? 0,
  };
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
  const target = await targetOf(deps, sessionId);
  const outcome = await act(deps, () => rejectHunk({ ...target, iteration, hunk, reason: reason.trim() || null }));
  if (!outcome) return undefined;
  if (outcome.result === 'rejected') {
    deps.changed(sessionId);
    const undo = 'Undo';
    void deps.window.showInfo(`Codeloops: ${outcome.message}`, undo).then((choice) => {
      if (choice === undo) void undoRejectionCommand(deps, sessionId, outcome.id ?? undefined);
    });
  } else {
    deps.log.warn(outcome.message);
    void deps.window.showWarning(`Codeloops: ${outcome.message}`);
  }
  return outcome;
}

export async function undoRejectionCommand(deps: ReviewCommandsDeps, sessionId: string, id?: string): Promise<ReviewActionOutcome | undefined> {
  const target = await targetOf(deps, sessionId);
  const outcome = await act(deps, () => undoRejection({ ...target, id }));
  if (!outcome) return undefined;
  if (outcome.result === 'rejection_undone') {
    deps.changed(sessionId);
    void deps.window.showInfo(`Codeloops: ${outcome.message}`);
  } else void deps.window.showWarning(`Codeloops: ${outcome.message}`);
  return outcome;
}

/** Stages one iteration's changes, or the whole session's (`iteration` null). */
export async function stageCommand(deps: ReviewCommandsDeps, sessionId: string, iteration: number | null): Promise<ReviewActionOutcome | undefined> {
  const target = await targetOf(deps, sessionId);
  const outcome = await act(deps, () => stageChanges({ ...target, iteration }));
  if (!outcome) return undefined;
  if (outcome.result === 'staged') {
    deps.changed(sessionId);
    void deps.window.showInfo(`Codeloops: ${outcome.message}`);
  } else void deps.window.showWarning(`Codeloops: ${outcome.message}`);
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
  const target = await targetOf(deps, where.sessionId);
  try {
    const comment = await addComment({ ...target, ...where, text });
    deps.changed(where.sessionId);
    return comment.id;
  } catch (error) {
    if (!isCodeloopsError(error)) throw error;
    void deps.window.showWarning(`Codeloops: ${error.message}`);
    return undefined;
  }
}

export async function resolveCommand(deps: ReviewCommandsDeps, sessionId: string, id: string, resolved: boolean): Promise<void> {
  await setResolved({ sessionId, sidecarDirectory: sidecarDir(sessionId), id, resolved });
  deps.changed(sessionId);
}
