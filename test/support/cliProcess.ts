import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot, tempDir } from './testEnvironment.js';
import { parseRunEvent, type RunEvent } from '../../src/sessionFormat/runEvents.js';

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** It was still running at `timeoutMs` and was killed: it hung. */
  timedOut: boolean;
}

export function cliPath(): string {
  const file = path.join(repoRoot(), 'dist', 'cli.js');
  if (!fs.existsSync(file)) throw new Error('dist/cli.js is missing: run npm run build');
  return file;
}

let readableCopy: string | undefined;

/**
 * The built CLI where any user can run it: `cliPath()` itself, unless the test runs it
 * as another user (`uid`). A checkout may sit where that user cannot enter (a root
 * user's home folder is mode 700), so such a run gets a copy of `dist/` in a
 * temporary folder everyone can read: the bundles need nothing else.
 */
export function cliPathFor(as: { uid?: number }): string {
  if (as.uid === undefined) return cliPath();
  if (readableCopy && fs.existsSync(readableCopy)) return readableCopy;
  const folder = tempDir('codeloops-cli-');
  fs.chmodSync(folder, 0o755);
  const dist = path.join(folder, 'dist');
  fs.cpSync(path.dirname(cliPath()), dist, { recursive: true });
  openUp(dist);
  readableCopy = path.join(dist, 'cli.js');
  return readableCopy;
}

/** Every folder enterable and every file readable by anyone, as a fresh checkout's would be. */
function openUp(entry: string): void {
  const stat = fs.lstatSync(entry);
  if (stat.isSymbolicLink()) return;
  fs.chmodSync(entry, stat.isDirectory() ? 0o755 : 0o644);
  if (stat.isDirectory()) for (const name of fs.readdirSync(entry)) openUp(path.join(entry, name));
}

export interface CliRun {
  child: ChildProcess;
  /** Resolves once stderr has printed text matching the pattern. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<void>;
  done: Promise<CliResult>;
}

export interface CliOptions {
  cwd: string;
  env?: Record<string, string>;
  /** Kill it after this long and report `timedOut` (a test of something that must not hang fails, not the run). */
  timeoutMs?: number;
  /** Run it as another user (a test run as root that needs a file root could read). */
  uid?: number;
  gid?: number;
  /** A pipe to its stdin (a loop paused for review reads the user's word there). */
  stdin?: 'pipe';
}

/** Starts the built CLI as a user would: `node dist/cli.js …`, no shell. */
export function startCli(args: string[], options: CliOptions): CliRun {
  const child = spawn(process.execPath, [cliPathFor(options), ...args], {
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
    uid: options.uid,
    gid: options.gid,
  });
  let stdout = '';
  let stderr = '';
  let timedOut = false;
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, options.timeoutMs);
  const waiters: Array<{ pattern: RegExp; resolve: () => void }> = [];
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    for (const waiter of waiters.splice(0)) {
      if (waiter.pattern.test(stderr)) waiter.resolve();
      else waiters.push(waiter);
    }
  });
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    }),
  );
  return {
    child,
    done,
    waitForStderr(pattern, timeoutMs = 30_000) {
      if (pattern.test(stderr)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`stderr never matched ${pattern}:\n${stderr}`)), timeoutMs);
        waiters.push({ pattern, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
  };
}

export function runCli(args: string[], options: CliOptions): Promise<CliResult> {
  return startCli(args, options).done;
}

export interface TerminalCliRun {
  /** Keys pressed at the terminal: `answer\n` types a line, `\x03` is Ctrl+C, `\x04` at a line's start is Ctrl+D (end of input). */
  type(keys: string): void;
  /** Resolves once the screen has shown text matching the pattern. */
  waitForScreen(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** `stdout` and `stderr` are both the whole screen: a terminal shows them as one. */
  done: Promise<CliResult>;
}

/**
 * The built CLI on a pseudo-terminal (util-linux `script`), as a user at a terminal
 * runs it: its stdin, stdout and stderr are a terminal, and what the test types goes
 * through the terminal's line discipline (Ctrl+C becomes SIGINT, Ctrl+D the end of input).
 */
export function startCliAtTerminal(args: string[], options: Pick<CliOptions, 'cwd' | 'env' | 'timeoutMs'>): TerminalCliRun {
  const command = [process.execPath, cliPath(), ...args].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  // -e: script exits with the CLI's own exit code.
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: options.cwd, env: { ...process.env, NO_COLOR: '1', ...options.env }, stdio: 'pipe' });
  let screen = '';
  let timedOut = false;
  const waiters = new Set<() => void>();
  const show = (chunk: string) => {
    screen += chunk;
    for (const waiter of [...waiters]) waiter();
  };
  child.stdout.setEncoding('utf8').on('data', show);
  child.stderr.setEncoding('utf8').on('data', show);
  // A question never asked, or an answer not taken, fails the test rather than waiting for ever.
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, options.timeoutMs ?? 30_000);
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      for (const waiter of [...waiters]) waiter();
      resolve({ code, signal, stdout: screen, stderr: screen, timedOut });
    }),
  );
  return {
    type: (keys) => child.stdin.write(keys),
    done,
    waitForScreen: (pattern, timeoutMs = 30_000) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => check(true), timeoutMs);
        const check = (givenUp = child.exitCode !== null) => {
          if (pattern.test(screen)) resolve();
          else if (givenUp) reject(new Error(`the screen never showed ${pattern}:\n${screen}`));
          else return;
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check(false);
      }),
  };
}

/** The run events a CLI run prints on stdout (`--events ndjson`), as they come, and a wait until they say something. */
export function followRunEvents(run: CliRun): { events: RunEvent[]; until: (done: (events: readonly RunEvent[]) => boolean) => Promise<void> } {
  const events: RunEvent[] = [];
  const waiters = new Set<() => void>();
  let buffered = '';
  run.child.stdout!.on('data', (chunk: Buffer) => {
    const parts = (buffered + chunk.toString('utf8')).split('\n');
    buffered = parts.pop()!;
    for (const line of parts) {
      const event = parseRunEvent(line);
      if (event) events.push(event);
    }
    for (const waiter of [...waiters]) waiter();
  });
  const until = (done: (events: readonly RunEvent[]) => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!done(events)) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
  return { events, until };
}
