import fs from 'node:fs';
import path from 'node:path';
import type { RunEvent } from '../sessionFormat/runEvents.js';
import { EVENTS_FILE, REVIEW_FILE } from '../sessionFormat/sessionFiles.js';
import { hasUserFeedback, readReview } from '../sessions/reviewState.js';
import { readReviewRecords, readSidecarEvents } from '../sessions/sidecarReader.js';
import type { Session, SessionStore } from '../sessions/sessionStore.js';
import type { IterationDetail, SessionView } from './sessionView.js';
import { buildIterationDetail, buildSessionView } from './sessionViewBuilder.js';

interface Loaded {
  /** Size and modification time of the session file and its record when loaded. */
  stamp: string;
  session: Session;
  events: RunEvent[];
  view: SessionView;
}

/**
 * Loaded sessions with their sidecar records, kept while their files do not change:
 * the tree, the viewer and the API ask for the same session many times while a loop
 * runs, and a big session should be parsed once per change, not once per question.
 */
export class SessionLibrary {
  private readonly cache = new Map<string, Loaded>();
  private static readonly MAX_CACHED = 20;

  constructor(
    readonly store: SessionStore,
    private readonly sidecarDirOf: (sessionId: string) => string,
  ) {}

  async view(sessionId: string): Promise<SessionView> {
    return (await this.load(sessionId)).view;
  }

  async detail(sessionId: string, iteration: number): Promise<IterationDetail | undefined> {
    const loaded = await this.load(sessionId);
    return buildIterationDetail(loaded.session, loaded.events, iteration);
  }

  async sessionAndEvents(sessionId: string): Promise<{ session: Session; events: RunEvent[] }> {
    const { session, events } = await this.load(sessionId);
    return { session, events };
  }

  /**
   * Whether the user has commented on the session or rejected part of it since the
   * loop last ran: a finished session is then open again (resume carries it on).
   * Cheap for the many sessions nobody reviewed: they have no review record.
   */
  async hasOpenFeedback(sessionId: string): Promise<boolean> {
    const directory = this.sidecarDirOf(sessionId);
    if (!fs.existsSync(path.join(directory, REVIEW_FILE))) return false;
    return hasUserFeedback(await readReview([directory]));
  }

  invalidate(sessionId: string): void {
    this.cache.delete(sessionId);
  }

  private stampOf(sessionId: string): string {
    const sidecar = this.sidecarDirOf(sessionId);
    const parts = [this.store.filePathOf(sessionId), path.join(sidecar, EVENTS_FILE), path.join(sidecar, REVIEW_FILE)].map((file) => {
      const stat = fs.statSync(file, { throwIfNoEntry: false });
      return stat ? `${stat.size}:${stat.mtimeMs}` : '-';
    });
    return parts.join('|');
  }

  private async load(sessionId: string): Promise<Loaded> {
    const stamp = this.stampOf(sessionId);
    const cached = this.cache.get(sessionId);
    if (cached && cached.stamp === stamp) {
      // Most recently used last, so the oldest is dropped first.
      this.cache.delete(sessionId);
      this.cache.set(sessionId, cached);
      return cached;
    }
    const session = await this.store.load(sessionId);
    const events = await readSidecarEvents(this.sidecarDirOf(sessionId));
    const review = await readReviewRecords(this.sidecarDirOf(sessionId));
    const loaded: Loaded = { stamp, session, events, view: buildSessionView(session, events, review) };
    this.cache.set(sessionId, loaded);
    while (this.cache.size > SessionLibrary.MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    return loaded;
  }
}
