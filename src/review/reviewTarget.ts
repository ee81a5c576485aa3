import type { SessionStore } from '../sessions/sessionStore.js';
import { IterationNotFoundError } from '../sessions/sessionErrors.js';

/** What a review action works on: a session, the repository that holds its snapshots, its records. */
export interface ReviewTarget {
  sessionId: string;
  /** The session's `working_dir`: the repository that holds its snapshots. */
  workingDir: string;
  /** The session's sidecar folder, where the review is recorded. */
  sidecarDir: string;
}

export interface SessionReviewTarget extends ReviewTarget {
  /** The session's own iterations. */
  iterations: number[];
  /** Its last iteration (0 before the first): a comment on the session as a whole is numbered after it. */
  lastIteration: number;
  /** The sidecar folders of the sessions it carries on and its own, oldest first: its review goes on from theirs. */
  chainSidecarDirs: string[];
}

/** Sessions followed back through `resumed_from` at most; a longer chain is a loop in the links. */
const MAX_CHAIN = 1000;

/**
 * A session as review needs it, read without its outputs and diffs (a session of
 * hundreds of megabytes costs a pass over its file, not its size in memory), and the
 * chain of sessions it carries on: their open findings and comments are its own.
 */
export async function reviewTargetOf(store: SessionStore, sidecarDirOf: (sessionId: string) => string, sessionId: string): Promise<SessionReviewTarget> {
  const { start, iterations } = await store.outline(sessionId);
  const chain = [sidecarDirOf(sessionId)];
  const seen = new Set([sessionId]);
  for (let previous = start.resumed_from; previous && !seen.has(previous) && chain.length < MAX_CHAIN;) {
    seen.add(previous);
    chain.unshift(sidecarDirOf(previous));
    previous = await store.startLine(previous).then(
      (line) => line.resumed_from,
      () => undefined, // an earlier session that cannot be read: the chain stops there
    );
  }
  return {
    sessionId,
    workingDir: start.working_dir,
    sidecarDir: sidecarDirOf(sessionId),
    iterations,
    lastIteration: iterations.at(-1) ?? start.resumed_after_iteration ?? 0,
    chainSidecarDirs: chain,
  };
}

/** Refuses an iteration the session does not have (it may belong to the session it carries on). */
export function assertIteration(target: SessionReviewTarget, iteration: number): void {
  if (target.iterations.includes(iteration)) return;
  throw new IterationNotFoundError(`Session ${target.sessionId} has no iteration ${iteration} (iterations: ${target.iterations.join(', ') || 'none'}).`, {
    iteration,
  });
}
