import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { readCliAnswer, type AnswerSchema } from '../../sessionFormat/cliAnswerReading.js';
import type { Failure } from '../../sessionFormat/failures.js';
import type { RunRefused } from '../../sessionFormat/runEvents.js';
import { HeadTailBuffer } from '../../text/headTailBuffer.js';
import { LineSplitter } from '../../text/lineSplitter.js';

/**
 * The one way the editor runs the bundled runner (`dist/cli.js`): every command the
 * extension asks of it, streamed or answered in JSON, starts here, and nothing else of
 * `src/extension/` imports `child_process` (the lint holds it). The runner is a child
 * process, so that the editor and a terminal share one code path and a runner that
 * crashes cannot take the extension host down. Its answers are read through the CLI's
 * own declarations (`sessionFormat/cliAnswers.ts`); a failure comes back with its code,
 * a runner that died without answering as `runner_crashed`. `--trust` is added here and
 * only here, from the workspace's trust.
 */

export interface RunnerClientOptions {
  /** The bundled runner, `dist/cli.js`. */
  cliPath: string;
  /** The program that runs it: the editor's own executable, as Node. */
  nodePath: string;
  /**
   * Whether VS Code trusts the workspace, asked at each call (trust can be given at any
   * time): VS Code's trust is the editor's word for the project's codeloops.toml.
   */
  isTrusted: () => boolean;
  env?: NodeJS.ProcessEnv;
}

/** Where and how one command runs. */
export interface RunnerCall {
  workingDir: string;
  /** The editor's settings for the folder, as a config layer (JSON) between the global and the project config. */
  editorSettings?: string;
  /**
   * The command may run what the project's codeloops.toml names (agents' commands, checks):
   * given `--trust` when the workspace is trusted, so that the runner runs them; withheld,
   * the runner refuses them (`project_untrusted`).
   */
  runsProjectPrograms?: boolean;
  /**
   * For a question (`ask`) that changes nothing: how long the runner may take to answer
   * before it is stopped (SIGKILL) and the answer is `runner_crashed`. A runner that hangs
   * (a folder on a stalled network mount, a bug) must not leave what waits on it (the
   * chat's confirmation, the Queue view) waiting forever. Never for what changes the
   * repository (`queue merge`): stopped halfway, it would leave a mess.
   */
  answerWithinMs?: number;
}

/** The most an answer may hold: far more than any the editor asks for (a forecast, a plan, the queue), far less than a string can. */
export const MAX_ANSWER_CHARS = 64 * 1024 * 1024;

/** How long a read-only question (forecast, doctor, the dry-run plan, the queue's list) may take; doctor asks each agent its version (10 s each at most). */
export const QUESTION_TIMEOUT_MS = 60_000;

/** A failure the editor acts on: the CLI's envelope, with how the runner ended. */
export type RunnerFailure =
  /** The runner said why it could not do it (bad config, missing agent…). */
  | (Failure & { kind: 'refused'; exitCode: number | null })
  /** The runner died (or could not start) without an answer; its last words on stderr are the message. */
  | (Failure & { kind: 'crashed'; code: 'runner_crashed'; exitCode: number | null; signal: NodeJS.Signals | null });

export type RunnerAnswer<T> = { ok: true; answer: T } | { ok: false; failure: RunnerFailure };

export type RunnerEnd<F> = { kind: 'finished'; final: F; exitCode: number | null } | RunnerFailure;

/** How a streamed command's NDJSON is read. */
export interface StreamReading<E, F extends E> {
  /** One line of stdout; anything that is not an event (a stray print) is undefined and ignored. */
  parse(line: string): E | undefined;
  /** The event that reports how the run ended. */
  isFinal(event: E): event is F;
}

/**
 * An argument the runner cannot be given at all: a process's arguments end at a NUL, so
 * Node refuses to start one that holds it (a prompt pasted or written by a chat model).
 * Said as the usage failure it is, where `spawn` would have thrown.
 */
function unusableArgument(args: readonly string[], call: RunnerCall): RunnerFailure | undefined {
  if (![...args, call.editorSettings ?? '', call.workingDir].some((arg) => arg.includes('\0'))) return undefined;
  return {
    kind: 'refused',
    code: 'usage',
    message: 'The text given holds a NUL character, which no program can be given: remove it and try again.',
    details: {},
    hint: null,
    exitCode: null,
  };
}

function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function crashed(message: string, exitCode: number | null, signal: NodeJS.Signals | null = null): RunnerFailure {
  return { kind: 'crashed', code: 'runner_crashed', message, details: {}, hint: null, exitCode, signal };
}

export class RunnerClient {
  constructor(private readonly options: RunnerClientOptions) {}

  /** The runner's program and arguments for a host that starts it itself (the MCP server definition). */
  get program(): { nodePath: string; cliPath: string } {
    return { nodePath: this.options.nodePath, cliPath: this.options.cliPath };
  }

  /**
   * A command that answers in JSON (`doctor`, `forecast`, `run --dry-run`, `queue …`):
   * its answer read with the schema `CLI_ANSWERS` names for it, or its failure with its
   * code. Never rejects.
   */
  ask<T>(answer: AnswerSchema<T>, args: readonly string[], call: RunnerCall): Promise<RunnerAnswer<T>> {
    const unusable = unusableArgument(args, call);
    if (unusable) return Promise.resolve({ ok: false, failure: unusable });
    return new Promise((resolve) => {
      const child = this.spawn(args, call, 'ignore');
      let stdout = '';
      const stderr = new HeadTailBuffer(2_000, 2_000);
      let overflowed = false;
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        if (overflowed) return;
        // Past Node's longest string, `+=` would throw in this handler and take the extension host down.
        if (stdout.length + chunk.length > MAX_ANSWER_CHARS) {
          overflowed = true;
          stdout = '';
          child.kill('SIGKILL');
        } else stdout += chunk;
      });
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.append(chunk));
      let timedOut = false;
      const timer =
        call.answerWithinMs === undefined
          ? undefined
          : setTimeout(() => {
              timedOut = true;
              child.kill('SIGKILL');
            }, call.answerWithinMs);
      child.on('error', (error) => {
        clearTimeout(timer);
        resolve({ ok: false, failure: crashed(`Could not start the runner: ${error.message}`, null) });
      });
      child.on('close', (exitCode, signal) => {
        clearTimeout(timer);
        if (overflowed) {
          return resolve({
            ok: false,
            failure: crashed(`The runner answered more than ${MAX_ANSWER_CHARS / 1024 / 1024} MB and was stopped.`, exitCode, signal),
          });
        }
        if (timedOut) {
          return resolve({
            ok: false,
            failure: crashed(`The runner did not answer within ${Math.round(call.answerWithinMs! / 1000)} s and was stopped.`, exitCode, signal),
          });
        }
        const read = readCliAnswer(answer, stdout);
        if (read?.ok) return resolve(read);
        if (read) return resolve({ ok: false, failure: { ...read.failure, kind: 'refused', exitCode } });
        const said = stderr.toString().trim();
        const printed = stdout.trim();
        const why = printed
          ? `The runner (${signal ?? `exit ${exitCode}`}) answered what the editor cannot read: ${JSON.stringify(printed.slice(0, 200))}${printed.length > 200 ? '…' : ''}`
          : `The runner stopped (${signal ?? `exit ${exitCode}`}) without an answer.`;
        resolve({ ok: false, failure: crashed(said ? `${said}\n${why}` : why, exitCode, signal) });
      });
    });
  }

  /** A command that streams run events (`run`/`resume --events ndjson`, a candidate group): see `RunnerStream`. */
  stream<E extends { type: string }, F extends E>(
    args: readonly string[],
    call: RunnerCall,
    reading: StreamReading<E, F>,
    onEvent: (event: E) => void,
  ): RunnerStream<E, F> {
    return new RunnerStream(unusableArgument(args, call) ?? this.spawn(args, call, 'pipe'), reading, onEvent);
  }

  /**
   * A long command whose progress is read elsewhere (`queue run`, read from the queue's
   * file): how it ended, and what it said on stderr, which says why if it failed.
   */
  start(args: readonly string[], call: RunnerCall): RunnerJob {
    const unusable = unusableArgument(args, call);
    return new RunnerJob(unusable ?? this.spawn(args, call, 'ignore'));
  }

  private spawn(args: readonly string[], call: RunnerCall, stdin: 'pipe' | 'ignore'): ChildProcess {
    // Flags go before a `--`: what follows it is an operand (a session id), never a flag.
    const end = args.indexOf('--') < 0 ? args.length : args.indexOf('--');
    const flags = [
      ...(call.editorSettings ? ['--editor-settings', call.editorSettings] : []),
      ...(call.runsProjectPrograms && this.options.isTrusted() ? ['--trust'] : []),
    ];
    return spawn(this.options.nodePath, [this.options.cliPath, ...args.slice(0, end), ...flags, ...args.slice(end)], {
      // A folder that is gone (deleted, an unmounted drive) would fail the spawn itself, as if the editor's Node were missing:
      // the runner starts elsewhere and says what is wrong with the folder (`directory_missing`), which `--working-dir` names.
      cwd: isDirectory(call.workingDir) ? call.workingDir : os.tmpdir(),
      // The editor's executable runs as plain Node with this variable.
      env: { ...(this.options.env ?? process.env), ELECTRON_RUN_AS_NODE: '1' },
      // A streamed run's stdin carries the user's word to a loop paused for review (`{"type":"continue"}`).
      stdio: [stdin, 'pipe', 'pipe'],
      windowsHide: true,
    });
  }
}

/**
 * A runner streaming its events as NDJSON on stdout, each validated before anyone sees
 * it; its stderr is kept (head and tail) to say why it died, if it does. One loop
 * (`LoopProcess`) and a candidate group (`CandidatesProcess`) are this with their own
 * arguments and events.
 */
export class RunnerStream<E extends { type: string }, F extends E> {
  private readonly stderr = new HeadTailBuffer(4_000, 8_000);
  readonly done: Promise<RunnerEnd<F>>;

  private readonly child: ChildProcess | undefined;

  /** `child`, or the failure that kept it from starting (`unusableArgument`). */
  constructor(started: ChildProcess | RunnerFailure, reading: StreamReading<E, F>, onEvent: (event: E) => void) {
    if ('kind' in started) {
      this.done = Promise.resolve(started);
      return;
    }
    const child = (this.child = started);
    child.stdin!.on('error', () => {}); // a runner that ended cannot be told anything
    let final: F | undefined;
    let refusal: RunRefused | undefined;
    const lines = new LineSplitter((line) => {
      const event = reading.parse(line);
      if (!event) return;
      if (reading.isFinal(event)) final = event;
      if (event.type === 'run_refused') refusal = event as unknown as RunRefused;
      onEvent(event);
    });
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => lines.push(chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.stderr.append(chunk));
    this.done = new Promise((resolve) => {
      child.on('error', (error) => resolve(crashed(`Could not start the runner: ${error.message}`, null)));
      child.on('close', (exitCode, signal) => {
        lines.flush();
        if (final) resolve({ kind: 'finished', final, exitCode });
        else if (refusal) resolve({ kind: 'refused', ...refusedFailure(refusal), exitCode });
        else
          resolve(
            crashed(this.stderr.toString().trim() || `The runner stopped (${signal ?? `exit ${exitCode}`}) without reporting an outcome.`, exitCode, signal),
          );
      });
    });
  }

  /** Writes one line to the runner's stdin, while it runs. */
  send(line: string): void {
    if (this.child && this.child.exitCode === null && this.child.stdin?.writable) this.child.stdin.write(line + '\n');
  }

  /** Like Ctrl+C in a terminal: the runner stops its agents, and ends its sessions `interrupted`. */
  interrupt(): void {
    if (this.child) interrupt(this.child);
  }
}

/** A refusal on the stream, in the envelope (a 0.x runner's event has no `failure`: read from its own fields). */
function refusedFailure(refusal: RunRefused): Failure {
  return refusal.failure ?? { code: refusal.code, message: refusal.message, details: refusal.details, hint: null };
}

/** A long command that answers nothing on stdout (`queue run`, `queue answer`). */
export class RunnerJob {
  private readonly stderr = new HeadTailBuffer(2_000, 4_000);
  readonly done: Promise<{ exitCode: number | null; stderr: string }>;

  private readonly child: ChildProcess | undefined;

  /** `child`, or the failure that kept it from starting: its message is the job's stderr. */
  constructor(started: ChildProcess | RunnerFailure) {
    if ('kind' in started) {
      this.done = Promise.resolve({ exitCode: null, stderr: started.message });
      return;
    }
    const child = (this.child = started);
    child.stdout!.resume();
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.stderr.append(chunk));
    this.done = new Promise((resolve) => {
      child.on('error', (error) => resolve({ exitCode: null, stderr: error.message }));
      child.on('close', (exitCode) => resolve({ exitCode, stderr: this.stderr.toString() }));
    });
  }

  /** Like Ctrl+C in a terminal: every task stops, each carried on by the next run. */
  interrupt(): void {
    if (this.child) interrupt(this.child);
  }
}

function interrupt(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
}
