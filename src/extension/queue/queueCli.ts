import { spawn, type ChildProcess } from 'node:child_process';
import type { FailureCode, FailureDetails } from '../../sessionFormat/failures.js';
import { HeadTailBuffer } from '../../text/headTailBuffer.js';

/** Where the bundled runner is and how to run it, in which folder. */
export interface QueueCliOptions {
  cliPath: string;
  nodePath: string;
  workingDir: string;
  env?: NodeJS.ProcessEnv;
}

/** What a `codeloops queue … --json` command answered: its JSON, or its failure with the engine's stable code. */
export type QueueCliAnswer<T> = { ok: true; json: T } | { ok: false; code: FailureCode | 'crashed'; message: string; details: FailureDetails };

function start(options: QueueCliOptions, args: readonly string[]): ChildProcess {
  return spawn(options.nodePath, [options.cliPath, 'queue', ...args, '--working-dir', options.workingDir], {
    cwd: options.workingDir,
    // The editor's executable runs as plain Node with this variable.
    env: { ...(options.env ?? process.env), ELECTRON_RUN_AS_NODE: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    windowsHide: true,
  });
}

/**
 * A short queue command (`add`, `list`, `move`, `remove`, `merge`) with `--json`: the
 * editor changes the queue only through the CLI, as a terminal would. Never rejects.
 */
export function queueCli<T>(options: QueueCliOptions, args: readonly string[]): Promise<QueueCliAnswer<T>> {
  return new Promise((resolve) => {
    const child = start(options, [...args, '--json']);
    let stdout = '';
    const stderr = new HeadTailBuffer(2_000, 2_000);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.append(chunk));
    child.on('error', (error) => resolve({ ok: false, code: 'crashed', message: `Could not start the runner: ${error.message}`, details: {} }));
    child.on('close', (exitCode) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        return resolve({
          ok: false,
          code: 'crashed',
          message: stderr.toString().trim() || `The runner stopped (exit ${exitCode}) without an answer.`,
          details: {},
        });
      }
      const error = (json as { error?: { code: FailureCode; message: string; details?: FailureDetails } }).error;
      if (exitCode !== 0 && error) resolve({ ok: false, code: error.code, message: error.message, details: error.details ?? {} });
      else resolve({ ok: true, json: json as T });
    });
  });
}

/**
 * A long queue command, `queue run` or `queue answer` (which carries the task on when no
 * run does): it runs until the queue has nothing left it can do. Its progress is read
 * from the queue's file, not from it; what it said on stderr says why, if it failed.
 */
export class QueueRunProcess {
  private readonly child: ChildProcess;
  private readonly stderr = new HeadTailBuffer(2_000, 4_000);
  readonly done: Promise<{ exitCode: number | null; stderr: string }>;

  constructor(options: QueueCliOptions, args: readonly string[]) {
    this.child = start(options, args);
    this.child.stdout!.resume();
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.stderr.append(chunk));
    this.done = new Promise((resolve) => {
      this.child.on('error', (error) => resolve({ exitCode: null, stderr: error.message }));
      this.child.on('close', (exitCode) => resolve({ exitCode, stderr: this.stderr.toString() }));
    });
  }

  /** Like Ctrl+C in a terminal: every task stops, each carried on by the next run. */
  interrupt(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGINT');
  }
}
