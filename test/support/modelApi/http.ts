/**
 * The HTTP core under the scripted model APIs: a server on 127.0.0.1 that routes
 * by method and path, parses JSON bodies, logs what it receives and answers with
 * JSON or Server-Sent Events. It knows nothing about models: the wire protocols
 * (`anthropicMessages.ts`, `openAiChat.ts`) and `scripted.ts` sit on top of it.
 * Only `node:http`, so tests need no extra dependencies.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as it arrived, kept as text so the log holds even bodies that are not JSON. */
export interface ReceivedRequest {
  method: string;
  /** Path with its query string, e.g. `/v1/messages?beta=true`. */
  path: string;
  /** Path without the query string: what routes match on. */
  pathname: string;
  rawBody: string;
}

/** A request a route accepted: `body` is the parsed JSON, undefined for an empty body. */
export interface JsonRequest extends ReceivedRequest {
  body: unknown;
}

/** One Server-Sent Event. A string `data` is written as is (OpenAI's `[DONE]`); anything else as JSON. */
export interface SseEvent {
  event?: string;
  data: unknown;
}

/**
 * A pause in a stream: what was sent so far reaches the client, the rest waits for
 * `until` (a model still producing its turn). If the client hangs up meanwhile the
 * stream ends there and `onHangUp` is told: the test learns that the rest was never sent.
 */
export interface SsePause {
  until: Promise<void>;
  onHangUp?: () => void;
}

export type Answer = { status?: number; json: unknown; headers?: Readonly<Record<string, string>> } | { events: readonly (SseEvent | SsePause)[] };

export interface Route {
  method: string;
  /** An exact pathname, or a pattern for paths that carry a parameter (Gemini puts the model in the path). */
  path: string | RegExp;
  /** May take its time (a promise): a model still thinking, for tests that interrupt. */
  answer(request: JsonRequest): Answer | Promise<Answer>;
}

/** What a vendor's error answer holds besides its status: its own body and headers (`retry-after`, rate-limit headers). */
export interface ErrorAnswer {
  /** The body as the vendor sends it; absent: the protocol's usual error body for the status and message. */
  body?: unknown;
  headers?: Readonly<Record<string, string>>;
}

/** Thrown by a route (or the scaffold) to answer with this HTTP status and message. */
export class StatusError extends Error {
  readonly status: number;
  readonly answer: ErrorAnswer;
  constructor(status: number, message: string, answer: ErrorAnswer = {}) {
    super(message);
    this.status = status;
    this.answer = answer;
  }
}

export interface ServerOptions {
  routes: readonly Route[];
  /** The protocol's error body, so the CLI reads the scaffold's 4xx and 5xx as it would the real API's. */
  errorBody(status: number, message: string): unknown;
}

export interface ScriptedServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  origin: string;
  /** Every request, in order of arrival. */
  received: ReceivedRequest[];
  /** The requests no route matched (answered 404): what a CLI asked that the test did not foresee. */
  unexpected: ReceivedRequest[];
  /** Stops listening and ends every open connection, including answers still pending. Safe to call twice. */
  close(): Promise<void>;
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parseJson(rawBody: string): unknown {
  if (rawBody === '') return undefined;
  try {
    return JSON.parse(rawBody);
  } catch (error) {
    throw new StatusError(400, `the body is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

function matches(route: Route, request: ReceivedRequest): boolean {
  if (route.method !== request.method) return false;
  return typeof route.path === 'string' ? route.path === request.pathname : route.path.test(request.pathname);
}

async function send(response: http.ServerResponse, answer: Answer): Promise<void> {
  // close() may have cut the connection while a responder was still thinking.
  if (response.destroyed || response.headersSent) return;
  if ('json' in answer) {
    const payload = JSON.stringify(answer.json);
    response.writeHead(answer.status ?? 200, { ...answer.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
    response.end(payload);
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const hungUp = new Promise<'hung up'>((resolve) => response.once('close', () => resolve('hung up')));
  for (const item of answer.events) {
    if ('until' in item) {
      if ((await Promise.race([item.until.then(() => 'go on' as const), hungUp])) === 'hung up') {
        item.onHangUp?.();
        return;
      }
      continue;
    }
    const line = `data: ${typeof item.data === 'string' ? item.data : JSON.stringify(item.data)}\n\n`;
    response.write(item.event === undefined ? line : `event: ${item.event}\n${line}`);
  }
  response.end();
}

export async function startServer(options: ServerOptions): Promise<ScriptedServer> {
  const received: ReceivedRequest[] = [];
  const unexpected: ReceivedRequest[] = [];

  const handle = async (incoming: http.IncomingMessage, response: http.ServerResponse): Promise<void> => {
    const path = incoming.url ?? '/';
    const request: ReceivedRequest = { method: incoming.method ?? 'GET', path, pathname: path.split('?')[0] ?? '/', rawBody: await readBody(incoming) };
    received.push(request);
    const route = options.routes.find((candidate) => matches(candidate, request));
    if (!route) {
      unexpected.push(request);
      throw new StatusError(404, `the scripted API does not serve ${request.method} ${request.pathname}`);
    }
    await send(response, await route.answer({ ...request, body: parseJson(request.rawBody) }));
  };

  const server = http.createServer((incoming, response) => {
    handle(incoming, response).catch((error: unknown) => {
      const status = error instanceof StatusError ? error.status : 500;
      const answer = error instanceof StatusError ? error.answer : {};
      const json = answer.body ?? options.errorBody(status, error instanceof Error ? error.message : String(error));
      void send(response, { status, json, headers: answer.headers });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // 127.0.0.1 only: a scripted model must not be reachable from the network.
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    origin: `http://127.0.0.1:${port}`,
    received,
    unexpected,
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (!server.listening) return resolve();
        server.close((error) => (error ? reject(error) : resolve()));
        // server.close() alone waits for keep-alive sockets and for answers that never come.
        server.closeAllConnections();
      }),
  };
}
