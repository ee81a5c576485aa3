import type http from 'node:http';
import type { LiveEvent } from './apiPayloads.js';
import { writeHead } from './httpResponses.js';
import type { LiveHub, LiveSubscriber } from './liveHub.js';

/** A comment line this often keeps proxies and browsers from timing out, and finds dead clients. */
const HEARTBEAT_MS = 15_000;
/**
 * A client this far behind is not reading (a suspended tab, a stuck script): it is
 * dropped rather than buffered without end. EventSource reconnects by itself.
 */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** How soon EventSource reconnects after the server restarts. */
const RETRY_MS = 2_000;

/**
 * `GET /api/sessions/live[?session=<id>]`: Server-Sent Events from the hub until the
 * client goes away; then the hub forgets it, and the last one to leave stops the
 * watching.
 */
export async function openLiveStream(request: http.IncomingMessage, response: http.ServerResponse, hub: LiveHub, sessionId: string | undefined): Promise<void> {
  writeHead(response, 200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  if (request.method === 'HEAD') return void response.end();
  response.write(`retry: ${RETRY_MS}\n\n`);
  let closed = false;
  let unsubscribe: (() => void) | undefined;
  const heartbeat = setInterval(() => response.write(': keep-alive\n\n'), HEARTBEAT_MS);
  const subscriber: LiveSubscriber = {
    sessionId,
    send(event: LiveEvent) {
      if (closed) return;
      if (response.writableLength > MAX_BUFFERED_BYTES) {
        response.destroy();
        return;
      }
      response.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    },
  };
  response.once('close', () => {
    closed = true;
    clearInterval(heartbeat);
    unsubscribe?.();
  });
  try {
    unsubscribe = await hub.subscribe(subscriber);
  } catch (error) {
    clearInterval(heartbeat);
    if (closed) return;
    const failure: LiveEvent = { type: 'stream_error', error: (error as Error).message };
    response.end(`event: ${failure.type}\ndata: ${JSON.stringify(failure)}\n\n`);
    return;
  }
  // It may have left while it was being greeted.
  if (closed) unsubscribe();
}
