import type http from 'node:http';

/**
 * Writing responses: security headers on every one, JSON errors, and streaming
 * with back-pressure that stops as soon as the client has gone.
 */

/** A request that cannot be answered: its status and a message for the `{error}` body. */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The client closed the connection while we were writing to it. */
export class ClientGoneError extends Error {
  override name = 'ClientGoneError';
}

/** On every response: nothing is sniffed, framed, leaked by referrer or read cross-origin. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
  // Data responses are never documents; the page sets its own policy.
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
};

export const JSON_TYPE = 'application/json; charset=utf-8';

export function writeHead(response: http.ServerResponse, status: number, headers: Record<string, string | number>): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'Cache-Control': 'no-store', ...headers });
}

/** A small JSON body, whole. */
export function sendJson(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  writeHead(response, status, { 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(text), ...headers });
  response.end(request.method === 'HEAD' ? undefined : text);
}

export function sendError(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent) {
    // Too late for a status: cut the stream so the client sees it was not whole.
    response.destroy();
    return;
  }
  sendJson(request, response, status, { error: message }, headers);
}

/**
 * What is handed to the socket at once. A bigger chunk would be copied whole into
 * the socket's buffer while the client reads it: written in slices, a slow client
 * costs the server this much, not the size of what it asked for.
 */
const SLICE_CHARS = 256 * 1024;

/**
 * Writes a chunk, waiting while the client's buffer is full. Throws ClientGoneError
 * once the client has gone, so whatever produces the chunks stops reading.
 */
export async function writeChunk(response: http.ServerResponse, chunk: string | Buffer): Promise<void> {
  for (let offset = 0; offset < chunk.length;) {
    let end = Math.min(chunk.length, offset + SLICE_CHARS);
    // Never between the two halves of a surrogate pair: each half alone would be written as U+FFFD.
    if (typeof chunk === 'string' && end < chunk.length && isHighSurrogate(chunk.charCodeAt(end - 1))) end -= 1;
    const slice = offset === 0 && end === chunk.length ? chunk : typeof chunk === 'string' ? chunk.slice(offset, end) : chunk.subarray(offset, end);
    offset = end;
    if (response.destroyed || response.writableEnded) throw new ClientGoneError('the client went away');
    if (response.write(slice)) continue;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        response.off('drain', done);
        response.off('close', done);
        resolve();
      };
      response.on('drain', done);
      response.on('close', done);
    });
    if (response.destroyed) throw new ClientGoneError('the client went away');
  }
  if (chunk.length === 0 && (response.destroyed || response.writableEnded)) throw new ClientGoneError('the client went away');
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Ends a streamed response, resolving once it has been handed to the socket. */
export function endResponse(response: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    if (response.destroyed) return resolve();
    response.end(() => resolve());
    response.once('close', () => resolve());
  });
}
