import type { LiveEvent } from '../../src/server/apiPayloads.js';

/**
 * The server's live updates (`/api/sessions/live`, Server-Sent Events). EventSource
 * reconnects by itself; every (re)connection starts with `hello`, after which a page
 * loads what it shows, so nothing that changed while it was away is missed.
 */

const LIVE_EVENT_TYPES: ReadonlySet<LiveEvent['type']> = new Set<LiveEvent['type']>([
  'hello',
  'session_created',
  'session_updated',
  'session_completed',
  'session_removed',
  'run_event',
  'stream_error',
]);

/** A light check, as for the editor's messages: a known type and an object (the contents are shown as text). */
export function isLiveEvent(value: unknown): value is LiveEvent {
  return typeof value === 'object' && value !== null && LIVE_EVENT_TYPES.has((value as { type?: unknown }).type as LiveEvent['type']);
}

/** `closed`: the server refused the stream for good (EventSource gives up). */
export type FeedStatus = 'connecting' | 'live' | 'reconnecting' | 'closed';

export interface LiveFeed {
  close(): void;
}

export function openLiveFeed(options: { sessionId?: string; onEvent: (event: LiveEvent) => void; onStatus?: (status: FeedStatus) => void }): LiveFeed {
  const url = options.sessionId ? `/api/sessions/live?session=${encodeURIComponent(options.sessionId)}` : '/api/sessions/live';
  const source = new EventSource(url);
  options.onStatus?.('connecting');
  source.addEventListener('open', () => options.onStatus?.('live'));
  source.addEventListener('error', () => options.onStatus?.(source.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting'));
  const receive = (message: MessageEvent<string>): void => {
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch {
      return;
    }
    if (isLiveEvent(data)) options.onEvent(data);
  };
  for (const type of LIVE_EVENT_TYPES) source.addEventListener(type, receive as EventListener);
  // A page that goes away closes its stream: the server stops watching for it at once.
  const close = (): void => source.close();
  window.addEventListener('pagehide', close);
  return {
    close() {
      window.removeEventListener('pagehide', close);
      close();
    },
  };
}
