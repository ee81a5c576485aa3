import fs from 'node:fs';
import os from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { execa } from 'execa';
import { endGroupAfterExit, stopGroup, trackGroup, type GroupRecorder } from '../process/processGroup.js';
import { HeadTailBuffer } from '../text/headTailBuffer.js';
import { LineSplitter } from '../text/lineSplitter.js';
import type { AgentAdapter, InvocationRequest } from './agentAdapter.js';
import type { AgentEvent, StreamDrift, Usage } from '../sessionFormat/agentEvents.js';
import type { AgentProgram } from './agentProgram.js';
import { NO_DRIFT } from './streamDrift.js';

export interface AgentLaunch {
  adapter: AgentAdapter;
  program: AgentProgram;
  extraArgs: readonly string[];
  /** Variables from config; they win over the adapter's own. */
  env: Readonly<Record<string, string>>;
  workingDir: string;
  timeoutSecs: number;
}

export interface AgentRunOptions {
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  /** Where the untouched stdout is kept, next to the session. */
  rawStdoutPath?: string;
  /** Per-run variables such as CODELOOPS_ITERATION. */
  runEnv?: Readonly<Record<string, string>>;
  /** Told of the agent's process group while it runs (the loop lock records it). */
  groups?: GroupRecorder;
  /**
   * When resuming an agent session whose cost the agent reports as a running total:
   * the cost already counted for earlier runs, so this run reports only its own.
   */
  costAlreadyCounted?: number;
}

export interface AgentRunResult {
  /** What the agent said and did, readable; head and tail kept when long. */
  transcript: string;
  /** The agent's last message, when it reports one. */
  finalText: string | null;
  stderr: string;
  /** False when the agent's program could not be started at all (see `failureReason`). */
  started: boolean;
  /** The process's exit code; 128 + the signal's number when a signal ended it; 127 when it could not start. */
  exitCode: number;
  signal: string | null;
  durationSecs: number;
  /** By the agent's own structured account, not its exit code. */
  succeeded: boolean;
  failureReason: string | null;
  timedOut: boolean;
  interrupted: boolean;
  agentSessionId: string | null;
  usage: Usage | null;
  /** The model the agent says it used, when it says. */
  model: string | null;
  toolCalls: number;
  /** What the agent's stream held that its adapter did not know (a newer CLI), ignored. */
  drift: StreamDrift;
}

/**
 * Transcript kept per run (and in the session's `actor_output`): the start and the
 * end, plenty to review. Every byte is still in the sidecar's raw stdout file. Kept
 * small on purpose: text held longer survives into V8's old generation, and 100 MB
 * of output must stream through in flat memory.
 */
export const TRANSCRIPT_HEAD_CHARS = 200_000;
export const TRANSCRIPT_TAIL_CHARS = 200_000;
const STDERR_KEEP_CHARS = 32_000;
/** What Linux accepts as one argument (MAX_ARG_STRLEN). */
const MAX_ARGUMENT_BYTES = 128 * 1024;

/**
 * Removed from every agent's environment: the variables that make Claude Code refuse
 * to start (set when the editor itself runs inside it), and git's location variables
 * (set inside git hooks), which would point the agent's git at another repository.
 */
const STRIPPED_VARIABLES = [
  'CLAUDECODE',
  'CLAUDE_CODE_ENTRYPOINT',
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_COMMON_DIR',
  'GIT_PREFIX',
  'GIT_OBJECT_DIRECTORY',
];

export function agentEnvironment(...layers: Readonly<Record<string, string>>[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !STRIPPED_VARIABLES.includes(key)) env[key] = value;
  }
  env.NO_COLOR = '1';
  for (const layer of layers) Object.assign(env, layer);
  for (const key of STRIPPED_VARIABLES) delete env[key];
  return env;
}

/**
 * Starts an agent in its own process group (never through a shell), streams its
 * stdout through the adapter's parser, and stops it on timeout or interrupt by
 * killing the whole group. Memory stays flat however much it prints.
 */
export async function runAgent(launch: AgentLaunch, request: InvocationRequest, options: AgentRunOptions = {}): Promise<AgentRunResult> {
  const { adapter } = launch;
  const invocation = adapter.invocation(request);
  // Config's extra arguments go before what must come last (a subcommand and its operands, `-- prompt`).
  const args = [...launch.program.leadingArgs, ...invocation.args, ...launch.extraArgs, ...(invocation.trailingArgs ?? [])];
  // An argument longer than the kernel takes (128 KiB on Linux) fails with E2BIG; say so plainly, before anything is opened.
  const oversized = args.find((arg) => Buffer.byteLength(arg) >= MAX_ARGUMENT_BYTES);
  if (oversized !== undefined) {
    return notStarted(
      `${adapter.displayName} takes its prompt as an argument, and this one is ${Buffer.byteLength(oversized).toLocaleString('en-US')} bytes: more than the ${MAX_ARGUMENT_BYTES.toLocaleString('en-US')} a single argument may hold. Shorten the task, or use an agent that reads the prompt from stdin.`,
    );
  }
  // PWD too: some agents (OpenCode) find their project from $PWD, not from the real cwd.
  const env = agentEnvironment(invocation.env, launch.env, options.runEnv ?? {}, { PWD: launch.workingDir });
  const parser = adapter.createParser();
  const transcript = new HeadTailBuffer(TRANSCRIPT_HEAD_CHARS, TRANSCRIPT_TAIL_CHARS);
  const stderr = new HeadTailBuffer(STDERR_KEEP_CHARS, STDERR_KEEP_CHARS);
  let raw = options.rawStdoutPath ? fs.createWriteStream(options.rawStdoutPath, { flags: 'a', mode: 0o600 }) : undefined;
  let rawLogError: string | null = null;
  let agentSessionId: string | null = null;
  let usage: Usage | null = null;
  let model: string | null = null;
  let toolCalls = 0;
  let resultText: string | null = null;
  let atLineStart = true;

  const appendTranscript = (text: string, separate: boolean): void => {
    if (separate && !atLineStart) transcript.append('\n');
    transcript.append(text);
    atLineStart = text.endsWith('\n');
  };
  const handle = (event: AgentEvent): void => {
    switch (event.kind) {
      case 'text':
        appendTranscript(event.delta ? event.text : event.text + '\n', !event.delta);
        break;
      case 'tool_use':
        toolCalls += 1;
        appendTranscript(`→ ${event.name}${event.summary ? `: ${event.summary}` : ''}\n`, true);
        break;
      case 'tool_result':
        if (event.isError) appendTranscript(`  ✗ ${event.summary}\n`, true);
        break;
      case 'error':
        appendTranscript(`[error] ${event.message}\n`, true);
        break;
      case 'session':
        agentSessionId = event.agentSessionId;
        break;
      case 'usage':
        usage = ownUsage(event.total);
        model = event.model ?? model;
        // Listeners get this run's own usage too (a resumed agent session reports the whole session's).
        options.onEvent?.({ ...event, total: usage });
        return;
      case 'result':
        resultText = event.text;
        break;
    }
    options.onEvent?.(event);
  };
  const ownUsage = (total: Usage): Usage =>
    adapter.costCoversAgentSession && options.costAlreadyCounted && total.costUsd !== undefined
      ? { ...total, costUsd: Math.max(0, total.costUsd - options.costAlreadyCounted) }
      : total;
  // Whole lines of text that arrive in one chunk travel as one event: an agent
  // printing a million lines must not cost a million events downstream.
  let pendingLines: string[] = [];
  const flushText = (): void => {
    if (pendingLines.length === 0) return;
    const text = pendingLines.join('\n');
    pendingLines = [];
    handle({ kind: 'text', text });
  };
  const splitter = new LineSplitter((line, partial) => {
    if (partial) {
      // Too long to be one of the agent's events: keep it as text.
      flushText();
      handle({ kind: 'text', text: line, delta: true });
      return;
    }
    for (const event of parser.parseLine(line)) {
      if (event.kind === 'text' && !event.delta) pendingLines.push(event.text);
      else {
        flushText();
        handle(event);
      }
    }
  });

  const startedAt = performance.now();
  const child = execa(launch.program.program, args, {
    cwd: launch.workingDir,
    env,
    extendEnv: false,
    // The prompt is written and stdin closed at once: `claude -p` hangs on an open pipe.
    ...(invocation.stdin === null ? { stdin: 'ignore' as const } : { input: invocation.stdin }),
    buffer: false,
    reject: false,
    detached: process.platform !== 'win32',
    cleanup: false,
    windowsHide: true,
  });
  const pid = child.pid;
  const forgetGroup = pid === undefined ? () => {} : trackGroup(pid, options.groups);

  let stopReason: 'timeout' | 'interrupt' | null = null;
  const stop = (reason: 'timeout' | 'interrupt'): void => {
    if (stopReason || pid === undefined) return;
    stopReason = reason;
    // As a terminal would: SIGINT to the whole group, then SIGTERM, then SIGKILL.
    stopGroup(pid);
  };
  // Not unref'd: while an agent runs, its timeout is what keeps the runner waiting.
  const timer = setTimeout(() => stop('timeout'), launch.timeoutSecs * 1000);
  const onAbort = (): void => stop('interrupt');
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  // Bytes go to the raw log untouched; text is decoded separately for the parser.
  const decoder = new StringDecoder('utf8');
  child.stdout?.on('data', (chunk: Buffer) => {
    // Back-pressure: when the disk falls behind, the agent waits rather than our memory growing.
    if (raw && !raw.write(chunk)) {
      child.stdout?.pause();
      raw.once('drain', () => child.stdout?.resume());
    }
    splitter.push(decoder.write(chunk));
    flushText();
  });
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => stderr.append(chunk));
  raw?.on('error', (error) => {
    // The raw log is a convenience: if it fails (disk full, folder deleted), the
    // run goes on without it, and the agent is never left blocked on a paused pipe.
    rawLogError = error.message;
    raw = undefined;
    child.stdout?.resume();
  });

  // A background process the agent left behind must not keep the run waiting.
  const stopDraining = endGroupAfterExit(child);

  const outcome = await child;
  clearTimeout(timer);
  stopDraining();
  options.signal?.removeEventListener('abort', onAbort);
  forgetGroup();
  splitter.push(decoder.end());
  splitter.flush();
  flushText();
  const rawLog = raw;
  await new Promise<void>((resolve) => (rawLog ? rawLog.end(resolve) : resolve()));
  const durationSecs = (performance.now() - startedAt) / 1000;

  const spawnFailed = outcome.failed && outcome.exitCode === undefined && outcome.signal === undefined;
  const exitCode = spawnFailed ? 127 : (outcome.exitCode ?? signalExitCode(outcome.signal));
  const verdict = parser.finish(spawnFailed ? null : exitCode);
  let failureReason = verdict.failureReason;
  if (outcome.signal && stopReason === null) failureReason = `${adapter.displayName} was killed by ${outcome.signal}`;
  if (spawnFailed) failureReason = `could not start ${launch.program.program}: ${outcome.originalMessage ?? outcome.shortMessage}`;
  if (stopReason === 'timeout') failureReason = `timed out after ${launch.timeoutSecs} s and was stopped`;
  if (stopReason === 'interrupt') failureReason = 'interrupted';
  const stderrText = stderr.toString() + (rawLogError ? `\n[codeloops: the raw output log stopped: ${rawLogError}]` : '');
  const diagnosis = adapter.diagnose(stderrText);
  if (diagnosis && !verdict.succeeded) failureReason = `${failureReason ?? 'failed'}. ${diagnosis}`;

  return {
    transcript: transcript.toString(),
    finalText: verdict.finalText ?? resultText,
    stderr: stderrText,
    started: !spawnFailed,
    exitCode,
    signal: outcome.signal ?? null,
    durationSecs,
    succeeded: verdict.succeeded && stopReason === null && !spawnFailed && !outcome.signal,
    failureReason,
    timedOut: stopReason === 'timeout',
    interrupted: stopReason === 'interrupt',
    agentSessionId,
    usage,
    model,
    toolCalls,
    drift: verdict.drift,
  };
}

/** A run that never started: what the loop records instead of an agent's answer. */
function notStarted(reason: string): AgentRunResult {
  return {
    transcript: '',
    finalText: null,
    stderr: reason,
    started: false,
    exitCode: 127,
    signal: null,
    durationSecs: 0,
    succeeded: false,
    failureReason: `could not start: ${reason}`,
    timedOut: false,
    interrupted: false,
    agentSessionId: null,
    usage: null,
    model: null,
    toolCalls: 0,
    drift: NO_DRIFT,
  };
}

/** 128 + the signal's number, as shells report it. */
function signalExitCode(signal: string | undefined): number {
  const number = signal ? (os.constants.signals as Record<string, number | undefined>)[signal] : undefined;
  return number !== undefined ? 128 + number : -1;
}
