import type { ReviewItems, ReviewRecord } from '../sessionFormat/reviewRecords.js';
import type { AcceptedChange } from '../sessionFormat/verification.js';
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

type Finding = ReviewItems['findings'][number];
type Comment = ReviewItems['comments'][number];

/** The review items as each event and record, in time order, leaves them. */
class ReviewFold {
  readonly items: ReviewItems = { findings: [], comments: [], rejections: [], staged: [], carried_on: null };
  /** Findings and comments, which are resolved and opened again alike. */
  private readonly byId = new Map<string, Finding | Comment>();
  private readonly rejections = new Map<string, ReviewItems['rejections'][number]>();

  event(event: RunEvent): void {
    if (event.type === 'critic_decision') {
      for (const id of event.resolved ?? []) this.setOpen(id, false);
      for (const finding of event.findings ?? []) this.addFinding({ ...finding, iteration: event.iteration, open: true, claimed: false });
    } else if (event.type === 'review_delivered') {
      for (const id of event.ids) this.delivered(id);
    } else if (event.type === 'review_claimed') {
      for (const id of event.ids) this.claimed(id);
    }
  }

  record(record: ReviewRecord): void {
    switch (record.type) {
      case 'comment':
        return this.addComment({ ...record, open: true, claimed: false });
      case 'resolved':
        return this.setOpen(record.id, false);
      case 'reopened':
        return this.setOpen(record.id, true);
      case 'hunk_rejected': {
        const item = { ...record, undone: false, delivered: false };
        this.rejections.set(record.id, item);
        this.items.rejections.push(item);
        return;
      }
      case 'rejection_undone': {
        const item = this.rejections.get(record.id);
        if (item) item.undone = true;
        return;
      }
      case 'staged':
        this.items.staged.push(record);
        return;
      case 'carried_on':
        this.items.carried_on = record.timestamp;
        return;
    }
  }

  private addFinding(item: Finding): void {
    this.byId.set(item.id, item);
    this.items.findings.push(item);
  }

  private addComment(item: Comment): void {
    this.byId.set(item.id, item);
    this.items.comments.push(item);
  }

  /** Resolved or opened again: no longer claimed by the actor either way. */
  private setOpen(id: string, open: boolean): void {
    const item = this.byId.get(id);
    if (!item) return;
    item.open = open;
    item.claimed = false;
  }

  /** A rejection told to an actor run. */
  private delivered(id: string): void {
    const rejection = this.rejections.get(id);
    if (rejection) rejection.delivered = true;
  }

  /** The actor says it addressed an item that is open. */
  private claimed(id: string): void {
    const item = this.byId.get(id);
    if (item?.open) item.claimed = true;
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

/** The protected changes the user accepted (`codeloops accept`), by file: the latest accept not taken back. */
/** The start's tests the user let fail on the final code, by id, with their reasons. */
export function acceptedTests(records: readonly ReviewRecord[]): Map<string, string | null> {
  const accepted = new Map<string, string | null>();
  for (const record of records) {
    if (record.type === 'test_accepted') accepted.set(record.id, record.reason);
    else if (record.type === 'test_acceptance_undone') accepted.delete(record.id);
  }
  return accepted;
}

export function acceptedChanges(records: readonly ReviewRecord[]): Map<string, AcceptedChange> {
  const accepted = new Map<string, AcceptedChange>();
  for (const record of records) {
    if (record.type === 'change_accepted') accepted.set(record.file, { file: record.file, kinds: record.kinds, reason: record.reason });
    else if (record.type === 'acceptance_undone') accepted.delete(record.file);
  }
  return accepted;
}
