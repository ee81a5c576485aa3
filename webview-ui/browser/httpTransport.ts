import type { LiveEvent } from '../../src/server/apiPayloads.js';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';
import type { HostMessage, ViewerMessage, ViewerState } from '../../src/sessionView/viewerProtocol.js';
import type { Transport } from '../transport.js';
import { fetchIterationDetail, fetchSessionView } from './api.js';
import { openLiveFeed, type FeedStatus, type LiveFeed } from './liveFeed.js';

/**
 * The viewer's host in a browser: what the editor's panel posts, fetched over HTTP
 * (`/api/sessions/:id/view`, `/iterations/:n`) and followed over Server-Sent Events.
 * The viewer (ViewerApp) is the same code in both hosts.
 */
export class HttpTransport implements Transport {
  private listener: ((message: unknown) => void) | undefined;
  private feed: LiveFeed | undefined;
  /** Live events that arrive before the session itself are held, then shown in order. */
  private held: RunEvent[] | null = [];
  private loading = false;
  private loadAgain = false;

  constructor(
    private readonly sessionId: string,
    private readonly options: { onStatus?: (status: FeedStatus) => void; onTitle?: (prompt: string) => void } = {},
  ) {}

  send(message: ViewerMessage): void {
    switch (message.type) {
      case 'ready':
        this.feed ??= openLiveFeed({ sessionId: this.sessionId, onEvent: (event) => this.onLive(event), onStatus: this.options.onStatus });
        break;
      case 'requestIteration':
        fetchIterationDetail(this.sessionId, message.iteration).then(
          (detail) => this.deliver({ type: 'iterationDetail', detail }),
          (error: Error) => this.deliver({ type: 'error', message: `Iteration ${message.iteration} cannot be shown: ${error.message}` }),
        );
        break;
      case 'openDiff':
        // The browser has no diff editor: the host says so (capabilities.openDiff is false).
        break;
    }
  }

  onMessage(listener: (message: unknown) => void): void {
    this.listener = listener;
  }

  loadState(): unknown {
    try {
      return JSON.parse(sessionStorage.getItem(this.stateKey()) ?? 'null');
    } catch {
      return undefined;
    }
  }

  saveState(state: ViewerState): void {
    try {
      sessionStorage.setItem(this.stateKey(), JSON.stringify(state));
    } catch {
      // Storage full or off: the page just forgets which iterations were open.
    }
  }

  close(): void {
    this.feed?.close();
  }

  private stateKey(): string {
    return `codeloops.viewer.${this.sessionId}`;
  }

  private onLive(event: LiveEvent): void {
    switch (event.type) {
      case 'hello':
        // (Re)connected: whatever happened meanwhile is in a fresh copy.
        void this.loadSession();
        break;
      case 'session_updated':
      case 'session_completed':
      case 'session_created':
        if (event.id === this.sessionId) void this.loadSession();
        break;
      case 'session_removed':
        if (event.id === this.sessionId) this.deliver({ type: 'error', message: 'This session was deleted.' });
        break;
      case 'run_event':
        if (event.id !== this.sessionId) break;
        if (this.held) this.held.push(event.event);
        else this.deliver({ type: 'live', event: event.event });
        break;
      default:
        break;
    }
  }

  private async loadSession(): Promise<void> {
    if (this.loading) {
      this.loadAgain = true;
      return;
    }
    this.loading = true;
    try {
      do {
        this.loadAgain = false;
        try {
          const { view, running } = await fetchSessionView(this.sessionId);
          this.options.onTitle?.(view.start.prompt);
          this.deliver({
            type: 'session',
            view,
            running,
            capabilities: { openDiff: false, resume: false, openLocation: false, reviewControl: false, acceptChange: false },
          });
          const held = this.held ?? [];
          this.held = null;
          for (const event of held) this.deliver({ type: 'live', event });
        } catch (error) {
          this.deliver({ type: 'error', message: `This session cannot be shown: ${(error as Error).message}` });
        }
      } while (this.loadAgain);
    } finally {
      this.loading = false;
    }
  }

  private deliver(message: HostMessage): void {
    this.listener?.(message);
  }
}
