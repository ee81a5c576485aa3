import type { NeedsInput } from '../sessionFormat/needsInput.js';
import type { ReviewAction, RunControl } from '../sessionFormat/reviewRecords.js';
import type { EmitEvent } from './iterationWork.js';
import type { LoopGuard } from './loopGuard.js';
import type { LoopRequest } from './loopRequest.js';
import type { RepositoryLock } from './repositoryLock.js';
import { withReviewLock } from './reviewLock.js';

export interface UserPausesSetup {
  guard: LoopGuard;
  lock: RepositoryLock;
  /** The session's sidecar folder, where review actions take their lock. */
  sidecarDir: string;
  emit: EmitEvent;
  /** The user's answer to the last iteration's question: the next actor is told it as their words. */
  onAnswer: (text: string) => void;
}

/**
 * The loop's pauses for the user: for their review (`review = "pause"`) and for the
 * answer to a question (`needs_input`). The clock stops, the lock says the loop is
 * paused (so that their own changes to the tree are allowed meanwhile), and the events say so.
 */
export class UserPauses {
  constructor(private readonly setup: UserPausesSetup) {}

  /**
   * Waits for the user's review: they read the diff, comment, reject hunks, then say to
   * go on or to stop. The time budget does not run while the loop waits.
   */
  async forReview(iteration: number, wait: NonNullable<LoopRequest['waitForReview']>): Promise<ReviewAction> {
    const { guard } = this.setup;
    return this.paused(iteration, undefined, async () => {
      const action = guard.signal.aborted ? 'stop' : await wait(iteration, guard.signal);
      return { reply: action, action };
    });
  }

  /**
   * Waits for the user's answer as for a review (the editor's notification, the
   * terminal's question): the answer goes to the next actor as their words. Null when
   * nobody can answer after all.
   */
  async forAnswer(iteration: number, needs: NeedsInput, ask: NonNullable<LoopRequest['askUser']>): Promise<RunControl | null> {
    const { guard } = this.setup;
    return this.paused(iteration, needs, async () => {
      const reply: RunControl | null = guard.signal.aborted ? { type: 'stop' } : await ask(iteration, needs, guard.signal);
      if (reply?.type === 'answer') {
        this.setup.onAnswer(reply.text);
        this.setup.emit({ type: 'needs_input_answered', iteration, answer: reply.text });
      }
      return { reply, action: reply === null || reply.type === 'stop' ? 'stop' : 'continue' };
    });
  }

  /** A pause for the user: the clock stops, the lock lets them change the tree meanwhile, and the events say so. */
  private async paused<T>(iteration: number, needs: NeedsInput | undefined, wait: () => Promise<{ reply: T; action: ReviewAction }>): Promise<T> {
    const { guard, lock, emit } = this.setup;
    guard.pauseClock();
    lock.setPausedForReview(true);
    emit({ type: 'review_paused', iteration, ...(needs && { needs_input: needs }) });
    let action: ReviewAction = 'stop';
    try {
      const waited = await wait();
      action = waited.action;
      return waited.reply;
    } finally {
      // A review action under way (a hunk half undone) finishes before the loop touches the tree again.
      await withReviewLock(this.setup.sidecarDir, async () => lock.setPausedForReview(false)).catch((error: unknown) => {
        lock.setPausedForReview(false);
        emit({ type: 'warning', message: `going on without waiting for a review action: ${(error as Error).message}` });
      });
      const pausedSecs = guard.resumeClock();
      emit({ type: 'review_resumed', iteration, action, paused_secs: pausedSecs });
      guard.startClock();
    }
  }
}
