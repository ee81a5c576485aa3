import type http from 'node:http';
import { isSessionId } from '../sessionFormat/sessionFiles.js';
import { HttpError } from './httpResponses.js';

/**
 * The checks every request passes before any route runs. The server listens on
 * 127.0.0.1 only, but any web page the user opens can still make their browser
 * send it requests: through another host name that resolves to 127.0.0.1 (DNS
 * rebinding), or cross-origin. Those are refused; so is anything but reading.
 */

const READ_METHODS = new Set(['GET', 'HEAD']);

/** The names this server answers to: what the user was shown, and `localhost`. */
export function ownOrigins(port: number): { hosts: Set<string>; origins: Set<string> } {
  const hosts = [`127.0.0.1:${port}`, `localhost:${port}`];
  return { hosts: new Set(hosts), origins: new Set(hosts.map((host) => `http://${host}`)) };
}

export interface RequestTarget {
  /** Path segments, percent-decoded one by one (so `%2f` stays inside its segment). */
  segments: string[];
  query: URLSearchParams;
}

export function checkRequest(request: http.IncomingMessage, port: number, isPage: (target: RequestTarget) => boolean): RequestTarget {
  const { hosts, origins } = ownOrigins(port);
  const host = request.headers.host?.toLowerCase();
  if (!host || !hosts.has(host)) {
    throw new HttpError(
      421,
      `This server answers only to http://127.0.0.1:${port}/ (the Host ${JSON.stringify(request.headers.host ?? '')} was refused: a web page may be trying to reach it under another name).`,
    );
  }
  const origin = request.headers.origin;
  if (origin !== undefined && !origins.has(origin.toLowerCase())) {
    throw new HttpError(403, `Requests from ${JSON.stringify(origin)} are refused: only the page this server serves may call it.`);
  }
  const target = parseTarget(request.url ?? '');
  // Browsers say where a request comes from; another site (or another port of
  // localhost, which is the same site) may only navigate to a page, not read data.
  const site = request.headers['sec-fetch-site'];
  const navigating = request.headers['sec-fetch-mode'] === 'navigate' && isPage(target);
  if ((site === 'cross-site' || site === 'same-site') && !navigating) {
    throw new HttpError(403, 'Requests from other sites are refused: only the page this server serves may call it.');
  }
  if (!READ_METHODS.has(request.method ?? '')) {
    throw new HttpError(405, `${request.method} is not allowed: this server only reads (GET, HEAD).`, { Allow: 'GET, HEAD' });
  }
  return target;
}

/**
 * Splits the request target without resolving `.` and `..` (a URL parser would turn
 * `/api/sessions/%2e%2e/x` into `/api/x`): a session id is judged as it was sent.
 */
export function parseTarget(rawTarget: string): RequestTarget {
  if (!rawTarget.startsWith('/')) throw new HttpError(400, 'The request target must be a path.');
  const queryAt = rawTarget.indexOf('?');
  const rawPath = queryAt < 0 ? rawTarget : rawTarget.slice(0, queryAt);
  const segments = rawPath
    .split('/')
    .slice(1)
    .map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        throw new HttpError(400, `The path ${JSON.stringify(rawPath)} is not valid percent-encoding.`);
      }
    });
  // A trailing slash is the same page: `/stats/` is `/stats`.
  if (segments.length > 1 && segments.at(-1) === '') segments.pop();
  return { segments, query: new URLSearchParams(queryAt < 0 ? '' : rawTarget.slice(queryAt + 1)) };
}

/** A session id from the path: a plain file name stem of the sessions folder, or a 400 before anything is read. */
export function sessionIdFrom(segment: string): string {
  if (!isSessionId(segment)) {
    throw new HttpError(400, `${JSON.stringify(segment.slice(0, 120))} is not a session id (expected a name such as 2025-01-27T15-30-45Z_a3f2c1).`);
  }
  return segment;
}
