import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { liveEventSchema, type LiveEvent } from '../../src/server/apiPayloads.js';
import { sidecarDirOf } from '../../src/sessionFormat/sessionFiles.js';
import { startUiServer, type UiServer } from '../../src/server/uiServer.js';
import { cliPathFor } from '../support/cliProcess.js';
import { repoRoot } from '../support/testEnvironment.js';

/** The API server in this process, on 127.0.0.1 and a free port, reading the given data home. */
export function startTestServer(sessionsDirectory: string, env: Record<string, string>, options: { liveLingerMs?: number } = {}): Promise<UiServer> {
  return startUiServer({
    port: 0,
    sessionsDirectory,
    sidecarDirOf: (id) => sidecarDirOf(id, env),
    assetsDirectory: path.join(repoRoot(), 'dist', 'webview'),
    liveLingerMs: options.liveLingerMs ?? 50,
  });
}

export interface UiProcess {
  child: ChildProcess;
  url: string;
  port: number;
  output(): { stdout: string; stderr: string };
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `node dist/cli.js ui …` as a user starts it (as another user, given `uid`); resolves once it has printed its URL. */
export async function startUiProcess(args: string[], env: Record<string, string>, as: { uid?: number; gid?: number } = {}): Promise<UiProcess> {
  const child = spawn(process.execPath, [cliPathFor(as), 'ui', ...args], {
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...as,
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed:\n${stdout}\n${stderr}`)), 10_000);
    const check = (): void => {
      const match = /^(http:\/\/127\.0\.0\.1:\d+\/)\n/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`codeloops ui exited:\n${stdout}\n${stderr}`));
    });
  });
  return { child, url, port: Number(new URL(url).port), output: () => ({ stdout, stderr }), exited };
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json<T = unknown>(): T;
}

/**
 * A request exactly as given: the path is sent byte for byte (no URL parser resolves
 * `..` or decodes `%2f` on the way), with the headers a test chooses.
 */
export function request(
  port: number,
  rawPath: string,
  options: { method?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: rawPath, method: options.method ?? 'GET', headers: { host: `127.0.0.1:${port}`, ...options.headers }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode!, headers: res.headers, body, json: <T>() => JSON.parse(body) as T });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.timeoutMs !== undefined) {
      // A server that does not answer fails the test that asked, with what was asked.
      req.setTimeout(options.timeoutMs, () => req.destroy(new Error(`no answer to ${rawPath} within ${options.timeoutMs} ms`)));
    }
    req.end();
  });
}

/** Raw bytes on a socket, for requests no HTTP client would send (no Host at all). */
export function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('end', () => resolve(received));
    socket.on('error', reject);
  });
}

/** Polls until the condition holds, or fails with what was last seen. */
export async function eventually(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * A Server-Sent Events client that validates every event against the documented
 * schema and lets a test wait for the one it expects.
 */
export class LiveClient {
  readonly events: LiveEvent[] = [];
  private request!: http.ClientRequest;
  private response: http.IncomingMessage | undefined;
  private buffer = '';
  private waiters: Array<() => void> = [];
  readonly opened: Promise<http.IncomingMessage>;
  error: Error | undefined;

  constructor(port: number, rawPath = '/api/sessions/live') {
    this.opened = new Promise((resolve, reject) => {
      this.request = http.get(
        { host: '127.0.0.1', port, path: rawPath, headers: { host: `127.0.0.1:${port}`, accept: 'text/event-stream' }, agent: false },
        (res) => {
          this.response = res;
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => this.take(chunk));
          res.on('error', () => {});
          resolve(res);
        },
      );
      this.request.on('error', (error) => {
        this.error = error;
        reject(error);
      });
    });
  }

  private take(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const name = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (data === undefined) continue; // retry: and keep-alive comments
      const event = liveEventSchema.parse(JSON.parse(data));
      if (event.type !== name) throw new Error(`event name ${name} does not match its type ${event.type}`);
      this.events.push(event);
    }
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** The first event (from `from` on) that matches; waits for it if needed. */
  async waitFor<T extends LiveEvent['type']>(
    type: T,
    predicate: (event: Extract<LiveEvent, { type: T }>) => boolean = () => true,
    timeoutMs = 20_000,
    from = 0,
  ): Promise<Extract<LiveEvent, { type: T }>> {
    const started = Date.now();
    for (;;) {
      const found = this.events
        .slice(from)
        .find((event): event is Extract<LiveEvent, { type: T }> => event.type === type && predicate(event as Extract<LiveEvent, { type: T }>));
      if (found) return found;
      if (Date.now() - started > timeoutMs)
        throw new Error(
          `no ${type} event within ${timeoutMs} ms; got: ${this.events.map((event) => (event.type === 'run_event' ? `run_event:${event.event.type}` : event.type)).join(', ')}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => (clearTimeout(timer), resolve()));
      });
    }
  }

  close(): void {
    this.response?.destroy();
    this.request.destroy();
  }
}
