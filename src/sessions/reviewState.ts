import { hasOpenUserFeedback, type ReviewItems, type ReviewRecord, type ReviewState } from '../sessionFormat/reviewRecords.js';
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
export function foldReview(events: readonly RunEvent[], records: readonly ReviewRecord[]): ReviewState {
  const state: ReviewState = { findings: [], comments: [], rejections: [], staged: [] };
  const findings = new Map<string, ReviewState['findings'][number]>();
  const comments = new Map<string, ReviewState['comments'][number]>();
  const rejections = new Map<string, ReviewState['rejections'][number]>();
  const setOpen = (id: string, open: boolean) => {
    const item = findings.get(id) ?? comments.get(id);
    if (item) {
      item.open = open;
      item.claimed = false;
    }
  };
  const timeline = [...events.map((event) => ({ at: event.timestamp, event })), ...records.map((record) => ({ at: record.timestamp, record }))];
  // Stable: within one file the order is the file's.
  timeline.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  for (const entry of timeline) {
    if ('event' in entry) {
      const event = entry.event;
      if (event.type === 'critic_decision') {
        for (const id of event.resolved ?? []) setOpen(id, false);
        for (const finding of event.findings ?? []) {
          const item = { finding, iteration: event.iteration, open: true, claimed: false };
          findings.set(finding.id, item);
          state.findings.push(item);
        }
      } else if (event.type === 'review_delivered') {
        for (const id of event.ids) {
          const rejection = rejections.get(id);
          if (rejection) rejection.delivered = true;
        }
      } else if (event.type === 'review_claimed') {
        for (const id of event.ids) {
          const item = findings.get(id) ?? comments.get(id);
          if (item?.open) item.claimed = true;
        }
      }
      continue;
    }
    const record = entry.record;
    switch (record.type) {
      case 'comment': {
        const item = { comment: record, open: true, claimed: false };
        comments.set(record.id, item);
        state.comments.push(item);
        break;
      }
      case 'resolved':
        setOpen(record.id, false);
        break;
      case 'reopened':
        setOpen(record.id, true);
        break;
      case 'hunk_rejected': {
        const item = { rejection: record, undone: false, delivered: false };
        rejections.set(record.id, item);
        state.rejections.push(item);
        break;
      }
      case 'rejection_undone': {
        const item = rejections.get(record.id);
        if (item) item.undone = true;
        break;
      }
      case 'staged':
        state.staged.push(record);
        break;
    }
  }
  return state;
}

/** Where each review item stands, as records a viewer or `codeloops review --json` shows. */
export function reviewItems(state: ReviewState): ReviewItems {
  return {
    findings: state.findings.map((item) => ({ ...item.finding, iteration: item.iteration, open: item.open, claimed: item.claimed })),
    comments: state.comments.map((item) => ({ ...item.comment, open: item.open, claimed: item.claimed })),
    rejections: state.rejections.map((item) => ({ ...item.rejection, undone: item.undone, delivered: item.delivered })),
    staged: state.staged,
  };
}

/** The review of a session and the sessions it carries on (their sidecar folders, oldest first). */
export async function readReview(sidecarDirectories: readonly string[], warn?: (message: string) => void): Promise<ReviewState> {
  const events: RunEvent[] = [];
  const records: ReviewRecord[] = [];
  for (const directory of sidecarDirectories) {
    events.push(...(await readSidecarEvents(directory, warn)).filter(isReviewEvent));
    records.push(...(await readReviewRecords(directory, warn)));
  }
  return foldReview(events, records);
}

/** The run events that say something about the review. */
export function isReviewEvent(event: RunEvent): boolean {
  return event.type === 'critic_decision' || event.type === 'review_delivered' || event.type === 'review_claimed';
}

/** What the next actor run is to be told: open findings and comments, rejections not told yet. */
export function pendingForActor(state: ReviewState): ReviewState {
  return {
    findings: state.findings.filter((item) => item.open),
    comments: state.comments.filter((item) => item.open),
    rejections: state.rejections.filter((item) => !item.undone && !item.delivered),
    staged: [],
  };
}

/** Whether the user has given feedback the loop has not acted on: a resumed session carries it on. */
export function hasUserFeedback(state: ReviewState): boolean {
  return hasOpenUserFeedback(reviewItems(state));
}
