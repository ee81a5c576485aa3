import type { SessionStats, SessionSummary } from '../../sessionFormat/sessionSummaries.js';
import { parseFilterInput, type SessionFilter } from '../../sessions/sessionFilter.js';
import type { StatsFilter, StatsHostMessage } from '../../sessionView/statsProtocol.js';
import type { Disposable, Event } from '../editorPorts.js';

/** Changes are gathered: a loop writes in bursts, and the figures are of every session. */
const REFRESH_DELAY_MS = 300;

/** What the figures come from: the `SessionStore`. */
export interface StatsSource {
  stats(filter: SessionFilter): Promise<SessionStats>;
  list(filter?: SessionFilter): Promise<SessionSummary[]>;
}

/**
 * What feeds the editor's stats page, without VS Code: the figures of the sessions the
 * page's filter lets through (at first this workspace folder's project), sent again
 * when the filter changes and, gathered, when the sessions do. Only the answer to the
 * latest request is sent: a slow one overtaken by a newer one is dropped.
 */
export class StatsFeed implements Disposable {
  private filter: StatsFilter;
  private latest = 0;
  private disposed = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly following: Disposable;

  constructor(
    private readonly source: StatsSource,
    private readonly post: (message: StatsHostMessage) => void,
    options: { project?: string; sessionsChanged: Event<unknown>; refreshDelayMs?: number },
  ) {
    this.filter = options.project ? { project: options.project } : {};
    const delay = options.refreshDelayMs ?? REFRESH_DELAY_MS;
    this.following = options.sessionsChanged(() => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.send(), delay);
    });
  }

  /** Shows these filters' figures from now on. */
  setFilter(filter: StatsFilter): Promise<void> {
    this.filter = filter;
    return this.send();
  }

  /** Sends the current filter's figures (or why there are none). */
  async send(): Promise<void> {
    const request = ++this.latest;
    const filter = this.filter;
    let message: StatsHostMessage;
    try {
      message = await statsMessage(this.source, filter);
    } catch (error) {
      message = { type: 'error', message: `The stats cannot be computed: ${(error as Error).message}` };
    }
    if (request === this.latest && !this.disposed) this.post(message);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.following.dispose();
    this.disposed = true; // nothing in flight is sent any more
  }
}

/** The figures of one filter: the stats, what the charts need of each session, and every project for the menu. */
export async function statsMessage(source: StatsSource, filter: StatsFilter): Promise<StatsHostMessage> {
  const sessionFilter = parseFilterInput(filter, '');
  const [stats, sessions, all] = await Promise.all([source.stats(sessionFilter), source.list(sessionFilter), source.list()]);
  return {
    type: 'stats',
    stats,
    sessions: sessions.map(({ timestamp, outcome, iterations }) => ({ timestamp, outcome, iterations })),
    filter,
    projects: [...new Set(all.map((summary) => summary.project))].sort((a, b) => a.localeCompare(b)),
  };
}
