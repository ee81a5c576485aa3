import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { releaseAskedSince, releaseMark, releaseMemorySoon } from '../process/memoryRelease.js';
import { SessionLibrary } from '../sessionView/sessionLibrary.js';
import { isCodeloopsError, type FailureCode } from '../sessionFormat/failures.js';
import { SessionStore } from '../sessions/sessionStore.js';
import { diffQuery, filterFromQuery, liveQuery, noQuery } from './apiQuery.js';
import { ClientGoneError, HttpError, sendError } from './httpResponses.js';
import { LiveHub } from './liveHub.js';
import { checkRequest, sessionIdFrom, type RequestTarget } from './requestGuards.js';
import { isLoopRunning } from '../sessions/loopLiveness.js';
import { iterationDetail, listSessions, sessionDiff, sessionDocument, sessionStats, sessionView, type SessionRoutesContext } from './sessionRoutes.js';
import { openLiveStream } from './sseStream.js';
import { sendAsset, sendPage, type PageName } from './staticFiles.js';

/** A request that grew the process by this much leaves garbage worth collecting at once. */
const RELEASE_AFTER_GROWTH_BYTES = 32 * 1024 * 1024;

/** Always the loopback interface: sessions hold prompts, code and agent output. */
export const UI_HOST = '127.0.0.1';

export interface UiServerOptions {
  /** 0 for any free port. */
  port: number;
  sessionsDirectory: string;
  sidecarDirOf: (sessionId: string) => string;
  /** The browser bundle and its files (`dist/webview`). */
  assetsDirectory: string;
  warn?: (message: string) => void;
  /** How long live watching outlasts the last client (see LiveHub). */
  liveLingerMs?: number;
}

export interface UiServer {
  readonly url: string;
  readonly port: number;
  readonly hub: LiveHub;
  /** Streams being written right now (downloads and live clients); tests check they are released. */
  openStreams(): number;
  close(): Promise<void>;
}

/**
 * `codeloops ui`: the sessions API and the browser viewer, on node:http. Read-only:
 * it reads the sessions folder and the sidecar records, and never writes a file or
 * starts an agent.
 */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const warn = options.warn ?? (() => {});
  // Read-only: the summary index lives in memory here, and is not written.
  const store = new SessionStore(options.sessionsDirectory, () => {}, { indexFile: null });
  const library = new SessionLibrary(store, options.sidecarDirOf);
  const hub = new LiveHub({ store, sidecarDirOf: options.sidecarDirOf, isRunning: isLoopRunning, lingerMs: options.liveLingerMs ?? 3_000 });
  const context: SessionRoutesContext = { store, library };
  let port = options.port;
  let streams = 0;

  const server = http.createServer((request, response) => {
    streams += 1;
    const rssBefore = process.memoryUsage.rss();
    const released = releaseMark();
    response.once('close', () => {
      streams -= 1;
      // What a big answer left behind (a line's text, what it parsed to, the slices sent) is given back once it is sent:
      // also when a reader of big lines already collected while it worked, before the last of it was garbage.
      if (releaseAskedSince(released) || process.memoryUsage.rss() - rssBefore > RELEASE_AFTER_GROWTH_BYTES) releaseMemorySoon();
    });
    handle(request, response).catch((error: unknown) => {
      if (error instanceof ClientGoneError || response.destroyed) return;
      if ((error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') return;
      const status = statusOf(error);
      if (status === 500) warn(`${request.method} ${request.url}: ${(error as Error).stack ?? String(error)}`);
      sendError(
        request,
        response,
        status,
        status === 500 ? `Internal error: ${(error as Error).message}` : (error as Error).message,
        error instanceof HttpError ? error.headers : {},
      );
    });
  });

  async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const target = checkRequest(request, port, (candidate) => pageOf(candidate) !== undefined);
    const { segments, query } = target;
    const page = pageOf(target);
    if (page) return sendPage(request, response, page);
    if (segments[0] === 'assets' && segments.length === 2) return sendAsset(request, response, options.assetsDirectory, segments[1]!);
    if (segments[0] !== 'api') throw new HttpError(404, 'No such page.');
    if (segments[1] === 'stats' && segments.length === 2) return sessionStats(context, request, response, filterFromQuery(query));
    if (segments[1] !== 'sessions') throw new HttpError(404, `No API route ${JSON.stringify('/' + segments.join('/'))}.`);
    if (segments.length === 2) return listSessions(context, request, response, filterFromQuery(query));
    // "live" is a name a session could have; it is the stream, and a session so named is not reachable here.
    if (segments[2] === 'live' && segments.length === 3) {
      const { session } = liveQuery(query);
      return openLiveStream(request, response, hub, session === undefined ? undefined : sessionIdFrom(session));
    }
    // Whatever follows /api/sessions/ must be a session id before anything else is looked at.
    const id = sessionIdFrom(segments[2]!);
    const rest = segments.slice(3);
    if (rest.length === 0) return (noQuery(query), sessionDocument(context, request, response, id));
    if (rest.length === 1 && rest[0] === 'diff') return sessionDiff(context, request, response, id, diffQuery(query).iteration);
    if (rest.length === 1 && rest[0] === 'view') return (noQuery(query), sessionView(context, request, response, id));
    if (rest.length === 2 && rest[0] === 'iterations') return (noQuery(query), iterationDetail(context, request, response, id, rest[1]!));
    throw new HttpError(404, `No API route ${JSON.stringify('/' + segments.join('/'))}.`);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, UI_HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  const url = `http://${UI_HOST}:${port}/`;

  return {
    url,
    port,
    hub,
    openStreams: () => streams,
    close: () =>
      new Promise<void>((resolve) => {
        hub.close();
        server.close(() => resolve());
        // Live streams and idle keep-alive connections would hold close() open forever.
        server.closeAllConnections();
      }),
  };
}

/** The browser pages: `/` (sessions), `/sessions/<id>`, `/stats`. */
function pageOf({ segments }: RequestTarget): PageName | undefined {
  if (segments.length === 1 && segments[0] === '') return 'sessions';
  if (segments.length === 1 && segments[0] === 'stats') return 'stats';
  if (segments.length === 2 && segments[0] === 'sessions') {
    sessionIdFrom(segments[1]!);
    return 'session';
  }
  return undefined;
}

/** The HTTP status of an engine failure, by its code. */
const STATUS_BY_CODE: Partial<Record<FailureCode, number>> = { session_not_found: 404, iteration_not_found: 404, not_a_session: 422, usage: 400 };

function statusOf(error: unknown): number {
  if (error instanceof HttpError) return error.status;
  return (isCodeloopsError(error) && STATUS_BY_CODE[error.code]) || 500;
}
