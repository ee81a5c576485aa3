import fs from 'node:fs';
import os from 'node:os';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { execa } from 'execa';
import { superviseGroup, type GroupRecorder, type GroupStopCause } from '../process/processGroup.js';
import { HeadTailBuffer } from '../text/headTailBuffer.js';

/** An agent's program, ready to start: everything `runAgent` worked out from the adapter and the config. */
export interface AgentCommand {
  program: string;
  args: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** Written to stdin, which is then closed; null: stdin is not opened. */
  stdin: string | null;
  timeoutSecs: number;
}

export interface AgentProcessOptions {
  /** Each piece of stdout as it arrives, decoded as UTF-8. */
  onStdout: (text: string) => void;
  signal?: AbortSignal;
  /** Told of the agent's process group while it runs (the loop lock records it). */
  groups?: GroupRecorder;
  /** Where the untouched stdout is kept, next to the session. */
  rawStdoutPath?: string;
}

/** How an agent's process ended, as the fold of its output needs it (`AgentRunFold.finish`). */
export interface AgentExit {
  /** Why the program could not be started at all, or null when it ran. */
  startFailure: string | null;
  /** The process's exit code; 128 + the signal's number when a signal ended it; 127 when it could not start. */
  exitCode: number;
  signal: string | null;
  /** Why the runner stopped it before it ended by itself. */
  stoppedFor: GroupStopCause | null;
  /** How long it was given. */
  timeoutSecs: number;
  /** Its stderr (head and tail), and a note when its raw log stopped. */
  stderr: string;
  durationSecs: number;
}

const STDERR_KEEP_CHARS = 32_000;

/**
 * Starts an agent in its own process group (never through a shell) and streams its
 * stdout: every byte to the raw log, decoded text to `onStdout`. The whole group is
 * stopped at the timeout or on an interrupt. Memory stays flat however much it
 * prints. Never throws: a program that cannot start is an exit that says why.
 */
export async function runAgentProcess(command: AgentCommand, options: AgentProcessOptions): Promise<AgentExit> {
  const startedAt = performance.now();
  const child = execa(command.program, command.args, {
    cwd: command.cwd,
    env: command.env,
    extendEnv: false,
    // The prompt is written and stdin closed at once: `claude -p` hangs on an open pipe.
    ...(command.stdin === null ? { stdin: 'ignore' as const } : { input: command.stdin }),
    buffer: false,
    reject: false,
    detached: process.platform !== 'win32',
    cleanup: false,
    windowsHide: true,
  });
  const group = superviseGroup(child, { timeoutSecs: command.timeoutSecs, signal: options.signal, groups: options.groups });
  const rawLog = options.rawStdoutPath ? new RawStdoutLog(options.rawStdoutPath, child.stdout) : null;
  // Bytes go to the raw log untouched; text is decoded separately for the parser.
  const decoder = new StringDecoder('utf8');
  child.stdout.on('data', (chunk: Buffer) => options.onStdout(decoder.write(chunk)));
  const stderr = new HeadTailBuffer(STDERR_KEEP_CHARS, STDERR_KEEP_CHARS);
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => stderr.append(chunk));

  const outcome = await child;
  group.release();
  options.onStdout(decoder.end());
  const rawLogError = rawLog ? await rawLog.close() : null;
  const spawnFailed = outcome.failed && outcome.exitCode === undefined && outcome.signal === undefined;
  return {
    startFailure: spawnFailed ? `could not start ${command.program}: ${outcome.originalMessage ?? outcome.shortMessage}` : null,
    exitCode: spawnFailed ? 127 : (outcome.exitCode ?? signalExitCode(outcome.signal)),
    signal: outcome.signal ?? null,
    stoppedFor: group.stoppedFor,
    timeoutSecs: command.timeoutSecs,
    stderr: stderr.toString() + (rawLogError ? `\n[codeloops: the raw output log stopped: ${rawLogError}]` : ''),
    durationSecs: (performance.now() - startedAt) / 1000,
  };
}

/**
 * The agent's stdout, byte for byte, in a file next to the session. A convenience:
 * if it fails (disk full, folder deleted) the run goes on without it, and the agent
 * is never left blocked on a paused pipe.
 */
class RawStdoutLog {
  private file: fs.WriteStream | undefined;
  private error: string | null = null;

  constructor(filePath: string, stdout: Readable) {
    const file = fs.createWriteStream(filePath, { flags: 'a', mode: 0o600 });
    this.file = file;
    stdout.on('data', (chunk: Buffer) => {
      // Back-pressure: when the disk falls behind, the agent waits rather than our memory growing.
      if (this.file && !this.file.write(chunk)) {
        stdout.pause();
        this.file.once('drain', () => stdout.resume());
      }
    });
    file.on('error', (error) => {
      this.error = error.message;
      this.file = undefined;
      stdout.resume();
    });
  }

  /** Once stdout has ended: flushes and closes the file; returns why it stopped, if it did. */
  async close(): Promise<string | null> {
    const file = this.file;
    if (file) await new Promise<void>((resolve) => file.end(resolve));
    return this.error;
  }
}

/** 128 + the signal's number, as shells report it. */
function signalExitCode(signal: string | undefined): number {
  const number = signal ? (os.constants.signals as Record<string, number | undefined>)[signal] : undefined;
  return number !== undefined ? 128 + number : -1;
}
