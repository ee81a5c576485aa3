import type { AgentEvent, StreamDrift, Usage } from '../sessionFormat/agentEvents.js';
import { HeadTailBuffer } from '../text/headTailBuffer.js';
import { LineSplitter } from '../text/lineSplitter.js';
import type { AgentAdapter, ParserVerdict, StreamParser } from './agentAdapter.js';
import type { AgentExit } from './agentProcess.js';
import type { AgentLimit } from './agentLimits.js';

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
  /** A failure from outside the agent's work (a usage or rate limit, an API down, a login refused); null otherwise. */
  limit: AgentLimit | null;
}

/**
 * Transcript kept per run (and in the session's `actor_output`): the start and the
 * end, plenty to review. Every byte is still in the sidecar's raw stdout file. Kept
 * small on purpose: text held longer survives into V8's old generation, and 100 MB
 * of output must stream through in flat memory.
 */
export const TRANSCRIPT_HEAD_CHARS = 200_000;
export const TRANSCRIPT_TAIL_CHARS = 200_000;

export interface AgentRunFoldOptions {
  /** Told of each event as it is folded in (the console, the sidecar, the budget). */
  onEvent?: (event: AgentEvent) => void;
  /**
   * When resuming an agent session whose cost the agent reports as a running total:
   * the cost already counted for earlier runs, so this run reports only its own.
   */
  costAlreadyCounted?: number;
  /** Told once when the agent's own log shows it stuck retrying (`StreamParser.readLogLine`): the run is to be stopped. */
  onStuck?: (limit: AgentLimit) => void;
}

/**
 * What an agent run amounts to, folded from what it printed: stdout read through
 * the adapter's parser into agent events; the events into a transcript (its head
 * and tail), a count of tool calls, the agent's session id, usage and model; and,
 * with how the process ended, the run's result. No process and no files here
 * (`agentProcess.ts` runs the program, `runAgent` joins the two), so every rule of
 * the result can be tested with events made by hand.
 */
export class AgentRunFold {
  private readonly parser: StreamParser;
  private readonly transcript = new HeadTailBuffer(TRANSCRIPT_HEAD_CHARS, TRANSCRIPT_TAIL_CHARS);
  private readonly lines = new LineSplitter((line, partial) => this.readLine(line, partial));
  /** Whole lines of text from one piece of stdout, sent on as one event (see `readStdout`). */
  private pendingLines: string[] = [];
  private atLineStart = true;
  private agentSessionId: string | null = null;
  private usage: Usage | null = null;
  private model: string | null = null;
  private toolCalls = 0;
  private resultText: string | null = null;
  /** The limit the agent's own log showed it stuck on, for which it was stopped; null: none. */
  private stuck: AgentLimit | null = null;
  private readonly logLines = new LineSplitter((line, partial) => {
    if (!partial) this.readLogLine(line);
  }, 64 * 1024);

  constructor(
    private readonly adapter: AgentAdapter,
    private readonly options: AgentRunFoldOptions = {},
  ) {
    this.parser = adapter.createParser();
  }

  /**
   * A piece of stdout as it arrives, decoded. Whole lines of text that arrive in one
   * piece travel on as one event: an agent printing a million lines must not cost a
   * million events downstream.
   */
  readStdout(text: string): void {
    this.lines.push(text);
    this.flushText();
  }

  /** A piece of the agent's own log as it is written (`Invocation.logFileEnv`, `StreamParser.readLogLine`). */
  readLog(text: string): void {
    if (this.parser.readLogLine && this.stuck === null) this.logLines.push(text);
  }

  /** One agent event: into the transcript and the counts, then on to the listener. */
  add(event: AgentEvent): void {
    switch (event.kind) {
      case 'text':
        this.write(event.delta ? event.text : event.text + '\n', !event.delta);
        break;
      case 'tool_use':
        this.toolCalls += 1;
        this.write(`→ ${event.name}${event.summary ? `: ${event.summary}` : ''}\n`, true);
        break;
      case 'tool_result':
        if (event.isError) this.write(`  ✗ ${event.summary}\n`, true);
        break;
      case 'error':
        this.write(`[error] ${event.message}\n`, true);
        break;
      case 'session':
        this.agentSessionId = event.agentSessionId;
        break;
      case 'usage':
        this.usage = this.ownUsage(event.total);
        this.model = event.model ?? this.model;
        // Listeners get this run's own usage too (a resumed agent session reports the whole session's).
        this.options.onEvent?.({ ...event, total: this.usage });
        return;
      case 'result':
        this.resultText = event.text;
        break;
    }
    this.options.onEvent?.(event);
  }

  /** Once the process has ended: the rest of stdout, the adapter's verdict and how the process ended, as one result. */
  finish(exit: AgentExit): AgentRunResult {
    this.lines.flush();
    this.flushText();
    const started = exit.startFailure === null;
    const verdict = this.parser.finish(started ? exit.exitCode : null);
    const succeeded = verdict.succeeded && exit.stoppedFor === null && started && !exit.signal;
    // Stopped for being stuck on a limit: a run that failed for that limit, not one the user interrupted.
    const stuck = succeeded ? null : this.stuck;
    return {
      transcript: this.transcript.toString(),
      finalText: verdict.finalText ?? this.resultText,
      stderr: exit.stderr,
      started,
      exitCode: exit.exitCode,
      signal: exit.signal,
      durationSecs: exit.durationSecs,
      succeeded,
      failureReason: stuck ? `${this.adapter.displayName} was stopped: ${stuck.message}` : failureReason(verdict, exit, this.adapter),
      timedOut: exit.stoppedFor === 'timeout',
      interrupted: exit.stoppedFor === 'interrupt' && stuck === null,
      agentSessionId: this.agentSessionId,
      usage: this.usage,
      model: this.model,
      toolCalls: this.toolCalls,
      drift: verdict.drift,
      // Only the agent's own failure: a run the runner stopped was not refused by the API.
      limit: stuck ?? (succeeded || exit.stoppedFor !== null || !started ? null : (verdict.limit ?? null)),
    };
  }

  private readLogLine(line: string): void {
    if (this.stuck !== null) return;
    this.stuck = this.parser.readLogLine?.(line) ?? null;
    if (this.stuck !== null) this.options.onStuck?.(this.stuck);
  }

  private readLine(line: string, partial: boolean): void {
    if (partial) {
      // Too long to be one of the agent's events: keep it as text.
      this.flushText();
      this.add({ kind: 'text', text: line, delta: true });
      return;
    }
    for (const event of this.parser.parseLine(line)) {
      if (event.kind === 'text' && !event.delta) this.pendingLines.push(event.text);
      else {
        this.flushText();
        this.add(event);
      }
    }
  }

  private flushText(): void {
    if (this.pendingLines.length === 0) return;
    const text = this.pendingLines.join('\n');
    this.pendingLines = [];
    this.add({ kind: 'text', text });
  }

  /** Appends to the transcript; `separate` starts it on a line of its own. */
  private write(text: string, separate: boolean): void {
    if (separate && !this.atLineStart) this.transcript.append('\n');
    this.transcript.append(text);
    this.atLineStart = text.endsWith('\n');
  }

  private ownUsage(total: Usage): Usage {
    const counted = this.options.costAlreadyCounted;
    return this.adapter.costCoversAgentSession && counted && total.costUsd !== undefined ? { ...total, costUsd: Math.max(0, total.costUsd - counted) } : total;
  }
}

/**
 * Why the run failed, or null: the runner's own stop first, then a program that
 * never started or a signal nobody sent it, then the agent's own account; with the
 * adapter's diagnosis of its stderr when the agent did not succeed.
 */
function failureReason(verdict: ParserVerdict, exit: AgentExit, adapter: AgentAdapter): string | null {
  const reason =
    exit.stoppedFor === 'interrupt'
      ? 'interrupted'
      : exit.stoppedFor === 'timeout'
        ? `timed out after ${exit.timeoutSecs} s and was stopped`
        : (exit.startFailure ?? (exit.signal ? `${adapter.displayName} was killed by ${exit.signal}` : verdict.failureReason));
  const diagnosis = adapter.diagnose(exit.stderr);
  return diagnosis && !verdict.succeeded ? `${reason ?? 'failed'}. ${diagnosis}` : reason;
}
