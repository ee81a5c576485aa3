import type { ReviewItems, ReviewRecord } from '../sessionFormat/reviewRecords.js';
import type { RunEvent } from '../sessionFormat/runEvents.js';
import { readReviewRecords, readSidecarEvents } from './sidecarReader.js';

/**
 * Where a session's review stands: the critic's findings and the user's comments,
 * open or resolved, and the hunks the user rejected, told to the actor or not yet.
 * Folded from the run's own record (findings, resolutions, what each actor run was
 * told and said it addressed) and the user's (`review.jsonl`), in time order, over
 * the session and the sessions it carries on: a resumed loop picks up what was left
 * open.
 */
export function foldReview(events: readonly RunEvent[], records: readonly ReviewRecord[]): ReviewItems {
  const fold = new ReviewFold();
  const timeline = [...events.map((event) => ({ at: event.timestamp, event })), ...records.map((record) => ({ at: record.timestamp, record }))];
  // Stable: within one file the order is the file's.
  timeline.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  for (const entry of timeline) {
    if ('event' in entry) fold.event(entry.event);
    else fold.record(entry.record);
  }
  return fold.items;
}

/** The items as folded so far, and each one by its id, for what later entries say of it. */
class ReviewFold {
  readonly items: ReviewItems = { findings: [], comments: [], rejections: [], staged: [], carried_on: null };
  private readonly byId = new Map<string, ReviewItems['findings'][number] | ReviewItems['comments'][number]>();
  private readonly rejections = new Map<string, ReviewItems['rejections'][number]>();

  event(event: RunEvent): void {
    if (event.type === 'critic_decision') {
      for (const id of event.resolved ?? []) this.setOpen(id, false);
      for (const finding of event.findings ?? []) {
        const item = { ...finding, iteration: event.iteration, open: true, claimed: false };
        this.byId.set(finding.id, item);
        this.items.findings.push(item);
      }
    } else if (event.type === 'review_delivered') {
      for (const id of event.ids) {
        const rejection = this.rejections.get(id);
        if (rejection) rejection.delivered = true;
      }
    } else if (event.type === 'review_claimed') {
      for (const id of event.ids) {
        const item = this.byId.get(id);
        if (item?.open) item.claimed = true;
      }
    }
  }

  record(record: ReviewRecord): void {
    switch (record.type) {
      case 'comment': {
        const item = { ...record, open: true, claimed: false };
        this.byId.set(record.id, item);
        this.items.comments.push(item);
        break;
      }
      case 'resolved':
        this.setOpen(record.id, false);
        break;
      case 'reopened':
        this.setOpen(record.id, true);
        break;
      case 'hunk_rejected': {
        const item = { ...record, undone: false, delivered: false };
        this.rejections.set(record.id, item);
        this.items.rejections.push(item);
        break;
      }
      case 'rejection_undone': {
        const item = this.rejections.get(record.id);
        if (item) item.undone = true;
        break;
      }
      case 'staged':
        this.items.staged.push(record);
        break;
      case 'carried_on':
        this.items.carried_on = record.timestamp;
        break;
    }
  }

  private setOpen(id: string, open: boolean): void {
    const item = this.byId.get(id);
    if (item) {
      item.open = open;
      item.claimed = false;
    }
  }
}

/** The run events that say something about the review. */
export function isReviewEvent(event: RunEvent): boolean {
  return event.type === 'critic_decision' || event.type === 'review_delivered' || event.type === 'review_claimed';
}

/** A review event as the fold needs it: the critic's whole answer is not kept. */
export function keepForReview(event: RunEvent): RunEvent | undefined {
  if (!isReviewEvent(event)) return undefined;
  return event.type === 'critic_decision' ? { ...event, critic_output: '' } : event;
}

/** The review of a session and the sessions it carries on (their sidecar folders, oldest first). */
export async function readReview(sidecarDirs: readonly string[], warn?: (message: string) => void): Promise<ReviewItems> {
  const events: RunEvent[] = [];
  const records: ReviewRecord[] = [];
  for (const directory of sidecarDirs) {
    events.push(...(await readSidecarEvents(directory, warn, keepForReview)));
    records.push(...(await readReviewRecords(directory, warn)));
  }
  return foldReview(events, records);
}

/** What the next actor run is to be told: open findings and comments, rejections not told yet. */
export function pendingForActor(items: ReviewItems): ReviewItems {
  return {
    ...items,
    findings: items.findings.filter((item) => item.open),
    comments: items.comments.filter((item) => item.open),
    rejections: items.rejections.filter((item) => !item.undone && !item.delivered),
    staged: [],
  };
}
