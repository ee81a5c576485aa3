import type { AcceptedChange } from '../sessionFormat/verification.js';
import type { ReviewItems, ReviewRecord } from '../sessionFormat/reviewRecords.js';
import type { RunEvent } from '../sessionFormat/runEvents.js';
import { acceptedChanges, acceptedTests, foldReview, isReviewEvent, keepForReview, pendingForActor } from '../sessions/reviewState.js';
import { readReviewRecords, readSidecarEvents } from '../sessions/sidecarReader.js';

/**
 * The review items a loop carries from one iteration to the next. The critic's
 * findings, what it resolved, what each actor was told and said it addressed come
 * from the loop's own events (and, read once, those of the sessions it carries on);
 * the user's comments and rejections are read again each time, because the user adds
 * them from another process (the editor, `codeloops review`) while the loop runs.
 */
export class ReviewLedger {
  private readonly events: RunEvent[] = [];
  private earlierEvents: RunEvent[] | undefined;

  constructor(
    /** The sidecar folders of the sessions carried on, oldest first, and this session's own. */
    private readonly sidecarDirs: { earlier: readonly string[]; own: string },
    /** The earlier sessions' review of this iteration and later ones is dropped (they were rolled back). */
    private readonly reviewBefore?: number,
  ) {}

  /** Keeps what a run event of this loop says about the review; every event the loop emits passes here. */
  note(event: RunEvent): void {
    if (isReviewEvent(event)) this.events.push(event);
  }

  /** What the actor is to be told now: the open findings and comments, and the rejections it was not told of yet. */
  async pending(): Promise<ReviewItems> {
    return pendingForActor(await this.read());
  }

  /**
   * What the critic is to check once the actor has worked: the items still open (with
   * the actor's claims) and the rejections the actor was told of in this iteration.
   */
  async openForCritic(told: ReviewItems): Promise<ReviewItems> {
    return { ...(await this.pending()), rejections: told.rejections };
  }

  /** The protected changes the user accepted so far, by file (read again each time: the user accepts from another process). */
  async acceptedChanges(): Promise<Map<string, AcceptedChange>> {
    return acceptedChanges(await this.records());
  }

  /** The start's tests the user let fail, by id, with their reasons (read again each time, as above). */
  async acceptedTests(): Promise<Map<string, string | null>> {
    return acceptedTests(await this.records());
  }

  private async read(): Promise<ReviewItems> {
    this.earlierEvents ??= (await Promise.all(this.sidecarDirs.earlier.map((dir) => readSidecarEvents(dir, undefined, keepForReview))))
      .flat()
      .filter((event) => this.reviewBefore === undefined || !('iteration' in event) || event.iteration < this.reviewBefore);
    return foldReview([...this.earlierEvents, ...this.events], await this.records());
  }

  private async records(): Promise<ReviewRecord[]> {
    const dirs = new Set([...this.sidecarDirs.earlier, this.sidecarDirs.own]);
    return (await Promise.all([...dirs].map((dir) => readReviewRecords(dir)))).flat();
  }
}

/** The ids of the items, as the actor is told them: the user's comments and rejections, then the critic's findings. */
export function itemIds(items: ReviewItems): string[] {
  return [...items.comments.map((item) => item.id), ...items.rejections.map((item) => item.id), ...items.findings.map((item) => item.id)];
}

/** The ids a verdict says are resolved that name an item open for it (a finding or a comment: a rejection is resolved by being undone). */
export function resolvedAmong(ids: readonly string[], open: ReviewItems): string[] {
  const openIds = new Set([...open.findings.map((item) => item.id), ...open.comments.map((item) => item.id)]);
  return ids.filter((id) => openIds.has(id));
}
