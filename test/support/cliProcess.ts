import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './testEnvironment.js';

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function cliPath(): string {
  const file = path.join(repoRoot(), 'dist', 'cli.js');
  if (!fs.existsSync(file)) throw new Error('dist/cli.js is missing: run npm run build');
  return file;
}

export interface CliRun {
  child: ChildProcess;
  /** Resolves once stderr has printed text matching the pattern. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<void>;
  done: Promise<CliResult>;
}

/** Runs that have not ended yet, for `stopCliRuns`. */
const unfinished = new Set<ChildProcess>();

/**
 * Stops every run a test left behind (a failed or timed-out test): SIGTERM, on which
 * the runner stops its agent's whole process group and ends its session, then
 * SIGKILL if it is still there after a few seconds. For `afterEach`.
 */
export async function stopCliRuns(): Promise<void> {
  await Promise.all(
    [...unfinished].map(
      (child) =>
        new Promise<void>((resolve) => {
          const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.once('close', () => {
            clearTimeout(killer);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}

/** Starts the built CLI as a user would: `node dist/cli.js …`, no shell. */
export function startCli(args: string[], options: { cwd: string; env?: Record<string, string>; stdin?: 'pipe' }): CliRun {
  const child = spawn(process.execPath, [cliPath(), ...args], {
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
  });
  unfinished.add(child);
  child.once('close', () => unfinished.delete(child));
  let stdout = '';
  let stderr = '';
  const waiters: Array<{ pattern: RegExp; resolve: () => void }> = [];
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    for (const waiter of waiters.splice(0)) {
      if (waiter.pattern.test(stderr)) waiter.resolve();
      else waiters.push(waiter);
    }
  });
  const done = new Promise<CliResult>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
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

export function runCli(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<CliResult> {
  return startCli(args, options).done;
}
