import path from 'node:path';
import type { RunEvent } from '../sessionFormat/runEvents.js';
import type { Outcome } from '../sessionFormat/sessionLines.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import type { SessionSummary } from '../sessionFormat/sessionSummaries.js';
import { SessionWatcher, type SessionChange } from '../sessions/sessionWatcher.js';
import type { LiveEvent } from './apiPayloads.js';
import { EVENTS_FILE } from '../sessionFormat/sessionFiles.js';
import { SidecarFollower } from './sidecarFollower.js';

/** Run events every client gets: enough to show which phase each running loop is in. */
const PHASE_EVENTS = new Set<RunEvent['type']>(['run_started', 'iteration_started', 'phase', 'iteration_finished', 'run_finished']);
/** Run events only a client watching that session gets: what its viewer shows live. */
const DETAIL_EVENTS = new Set<RunEvent['type']>(['agent_event', 'diff_captured', 'critic_decision']);
/** After a session ends, its record gets a last event or two (run_finished). */
const FOLLOW_AFTER_END_MS = 2_000;

export interface LiveSubscriber {
  /** A session whose detailed run events this client wants too. */
  readonly sessionId?: string;
  send(event: LiveEvent): void;
}

export interface LiveHubOptions {
  store: SessionStore;
  sidecarDirOf: (sessionId: string) => string;
  isRunning: (summary: SessionSummary) => boolean;
  /**
   * How long watching goes on after the last client left: a page that reloads or
   * moves to another page reconnects at once, and the watcher and its baseline can
   * serve it. Then everything is released.
   */
  lingerMs?: number;
}

interface Known {
  iterations: number;
  outcome: Outcome | null;
}

/**
 * Live updates for every connected client, from one watcher on the sessions folder
 * and one follower per running loop's sidecar record. Nothing runs while nobody
 * listens: the first client starts the watcher, the last one's leaving stops it.
 */
export class LiveHub {
  private readonly subscribers = new Set<LiveSubscriber>();
  /** Clients being greeted: not in `subscribers` yet, but the hub must not stop under them. */
  private joining = 0;
  private watcher: SessionWatcher | undefined;
  /** What each session looked like at the last change, to tell what is new. */
  private readonly known = new Map<string, Known>();
  private readonly running = new Set<string>();
  private readonly followers = new Map<string, SidecarFollower>();
  private readonly followerTimers = new Map<string, NodeJS.Timeout>();
  private started: Promise<void> | undefined;
  /** Changes are applied one at a time, in the order they were seen. */
  private queue: Promise<void> = Promise.resolve();
  private generation = 0;
  private stopTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: LiveHubOptions) {}

  /**
   * Adds a client. It gets `hello` (the running sessions), then, for a client of one
   * session, the events of the iteration under way, then every change as it happens.
   * Returns the function that removes it.
   */
  async subscribe(subscriber: LiveSubscriber): Promise<() => void> {
    if (this.closed) throw new Error('The server is stopping.');
    clearTimeout(this.stopTimer);
    this.start();
    const unsubscribe = (): void => {
      if (!this.subscribers.delete(subscriber)) return;
      if (this.idle()) this.scheduleStop();
    };
    this.joining += 1;
    try {
      await this.started;
      const follower = subscriber.sessionId && this.running.has(subscriber.sessionId) ? this.follow(subscriber.sessionId) : undefined;
      await follower?.ready;
    } catch (error) {
      this.joining -= 1;
      if (this.idle()) this.scheduleStop();
      throw error;
    }
    this.joining -= 1;
    if (this.closed) throw new Error('The server is stopping.');
    // From here on nothing awaits: no event can slip between the greeting and the stream.
    subscriber.send({ type: 'hello', running: [...this.running] });
    const replay = subscriber.sessionId ? (this.followers.get(subscriber.sessionId)?.replayEvents() ?? []) : [];
    for (const event of replay) subscriber.send({ type: 'run_event', id: subscriber.sessionId!, event });
    this.subscribers.add(subscriber);
    return unsubscribe;
  }

  /** What is held right now; tests check that leaving clients release everything. */
  stats(): { subscribers: number; watching: boolean; followers: number } {
    return { subscribers: this.subscribers.size, watching: this.watcher !== undefined, followers: this.followers.size };
  }

  close(): void {
    this.closed = true;
    this.subscribers.clear();
    this.stop();
  }

  private start(): void {
    if (this.started) return;
    const generation = ++this.generation;
    try {
      this.watcher = new SessionWatcher(this.options.store.directory);
    } catch (error) {
      this.started = Promise.reject(new Error(`Cannot watch ${this.options.store.directory}: ${(error as Error).message}`));
      this.started.catch(() => {});
      return;
    }
    this.watcher.onChange((change) => this.enqueue(() => this.apply(change, generation)));
    // The baseline goes first in the queue: changes seen meanwhile are applied after it.
    this.started = this.enqueue(async () => {
      const summaries = await this.options.store.list();
      if (generation !== this.generation) return;
      for (const summary of summaries) {
        this.known.set(summary.id, { iterations: summary.iterations, outcome: summary.outcome });
        if (summary.outcome === null && this.options.isRunning(summary)) this.running.add(summary.id);
      }
      for (const id of this.running) this.follow(id);
    });
  }

  private idle(): boolean {
    return this.subscribers.size === 0 && this.joining === 0;
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => {});
    return next;
  }

  private scheduleStop(): void {
    clearTimeout(this.stopTimer);
    const linger = this.options.lingerMs ?? 0;
    if (linger <= 0) this.stop();
    // Waiting to let go must not keep a stopping process alive.
    else this.stopTimer = setTimeout(() => this.stop(), linger).unref();
  }

  private stop(): void {
    clearTimeout(this.stopTimer);
    this.generation += 1;
    this.watcher?.close();
    this.watcher = undefined;
    this.started = undefined;
    for (const id of [...this.followers.keys()]) this.unfollow(id);
    this.known.clear();
    this.running.clear();
  }

  private async apply(change: SessionChange, generation: number): Promise<void> {
    if (generation !== this.generation) return;
    const { id } = change;
    if (change.kind === 'removed') {
      this.known.delete(id);
      this.running.delete(id);
      this.unfollow(id);
      this.broadcast({ type: 'session_removed', id });
      return;
    }
    const summary = await this.options.store.summary(id);
    // Empty or unreadable for now (being created): the next change tells more.
    if (!summary || generation !== this.generation) return;
    const previous = this.known.get(id);
    if (!previous) {
      const running = summary.outcome === null && this.options.isRunning(summary);
      if (running) {
        this.running.add(id);
        // Its clients just hear of it: its record from the first event on is news to them.
        this.follow(id, { fromStart: true });
      }
      this.broadcast({ type: 'session_created', id, summary, running });
    } else if (summary.outcome === null && !this.running.has(id) && this.options.isRunning(summary)) {
      this.running.add(id);
      this.follow(id);
    }
    for (let iteration = (previous?.iterations ?? 0) + 1; iteration <= summary.iterations; iteration++) {
      this.broadcast({ type: 'session_updated', id, iteration, summary });
    }
    if (summary.outcome !== null && previous?.outcome == null) {
      this.running.delete(id);
      this.broadcast({ type: 'session_completed', id, outcome: summary.outcome, summary });
      this.unfollowSoon(id);
    }
    this.known.set(id, { iterations: summary.iterations, outcome: summary.outcome });
    this.followers.get(id)?.poke();
  }

  private follow(id: string, options: { fromStart?: boolean } = {}): SidecarFollower {
    const existing = this.followers.get(id);
    if (existing) return existing;
    const file = path.join(this.options.sidecarDirOf(id), EVENTS_FILE);
    const follower = new SidecarFollower(
      file,
      (event) => this.onRunEvent(id, event),
      () => this.unfollow(id),
      options,
    );
    this.followers.set(id, follower);
    return follower;
  }

  private unfollowSoon(id: string): void {
    if (!this.followers.has(id) || this.followerTimers.has(id)) return;
    this.followerTimers.set(id, setTimeout(() => this.unfollow(id), FOLLOW_AFTER_END_MS).unref());
  }

  private unfollow(id: string): void {
    clearTimeout(this.followerTimers.get(id));
    this.followerTimers.delete(id);
    this.followers.get(id)?.close();
    this.followers.delete(id);
  }

  private onRunEvent(id: string, event: RunEvent): void {
    if (event.type === 'run_finished') this.running.delete(id);
    const everyone = PHASE_EVENTS.has(event.type);
    if (!everyone && !DETAIL_EVENTS.has(event.type)) return;
    for (const subscriber of this.subscribers) {
      if (everyone || subscriber.sessionId === id) subscriber.send({ type: 'run_event', id, event });
    }
  }

  private broadcast(event: LiveEvent): void {
    for (const subscriber of this.subscribers) subscriber.send(event);
  }
}
