import { spawn, type ChildProcess } from 'node:child_process';
import type { FailureCode, FailureDetails } from '../../sessionFormat/failures.js';
import type { RunRefused } from '../../sessionFormat/runEvents.js';
import { HeadTailBuffer } from '../../text/headTailBuffer.js';
import { LineSplitter } from '../../text/lineSplitter.js';

export interface RunnerProcessOptions<E, F extends E> {
  /** The program that runs the bundled runner: the editor's own executable, as Node. */
  nodePath: string;
  /** The runner (`dist/cli.js`) and its arguments, each one argument: never a shell string. */
  args: string[];
  workingDir: string;
  env?: NodeJS.ProcessEnv;
  /** Reads one line of the runner's NDJSON stdout; anything that is not an event (a stray print) is undefined and ignored. */
  parse(line: string): E | undefined;
  /** The event that reports how the run ended. */
  isFinal(event: E): event is F;
}

/** How a runner ended without its final event. */
export type RunnerFailure =
  /** The runner could not start (bad config, missing agent…) and said why (`run_refused`). */
  | { kind: 'refused'; code: FailureCode; message: string; details: FailureDetails; exitCode: number | null }
  /** The runner died without reporting an outcome. */
  | { kind: 'crashed'; message: string; exitCode: number | null; signal: NodeJS.Signals | null };

export type RunnerEnd<F> = { kind: 'finished'; final: F; exitCode: number | null } | RunnerFailure;

/**
 * The runner as a child process: the editor and the CLI share one code path, and a
 * runner that crashes cannot take the extension host down. It streams its events as
 * NDJSON on stdout, each validated before anyone sees it; its stderr is kept (head and
 * tail) to say why it died, if it does. One loop (`LoopProcess`) and a candidate group
 * (`CandidatesProcess`) are this with their own arguments and events.
 */
export class RunnerProcess<E extends { type: string }, F extends E> {
  private readonly child: ChildProcess;
  private readonly stderr = new HeadTailBuffer(4_000, 8_000);
  readonly done: Promise<RunnerEnd<F>>;

  constructor(options: RunnerProcessOptions<E, F>, onEvent: (event: E) => void) {
    this.child = spawn(options.nodePath, options.args, {
      cwd: options.workingDir,
      // The editor's executable runs as plain Node with this variable.
      env: { ...(options.env ?? process.env), ELECTRON_RUN_AS_NODE: '1' },
      // stdin carries the user's word to a loop paused for review (`{"type":"continue"}`).
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    this.child.stdin!.on('error', () => {}); // a runner that ended cannot be told anything
    let final: F | undefined;
    let refusal: RunRefused | undefined;
    const lines = new LineSplitter((line) => {
      const event = options.parse(line);
      if (!event) return;
      if (options.isFinal(event)) final = event;
      if (event.type === 'run_refused') refusal = event as unknown as RunRefused;
      onEvent(event);
    });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => lines.push(chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.stderr.append(chunk));
    this.done = new Promise((resolve) => {
      this.child.on('error', (error) => resolve({ kind: 'crashed', message: `Could not start the runner: ${error.message}`, exitCode: null, signal: null }));
      this.child.on('close', (exitCode, signal) => {
        lines.flush();
        if (final) resolve({ kind: 'finished', final, exitCode });
        else if (refusal) resolve({ kind: 'refused', code: refusal.code, message: refusal.message, details: refusal.details, exitCode });
        else {
          resolve({
            kind: 'crashed',
            message: this.stderr.toString().trim() || `The runner stopped (${signal ?? `exit ${exitCode}`}) without reporting an outcome.`,
            exitCode,
            signal,
          });
        }
      });
    });
  }

  /** Writes one line to the runner's stdin, while it runs. */
  send(line: string): void {
    if (this.child.exitCode === null && this.child.stdin?.writable) this.child.stdin.write(line + '\n');
  }

  /** Like Ctrl+C in a terminal: the runner stops its agents, and ends its sessions `interrupted`. */
  interrupt(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGINT');
  }
}
