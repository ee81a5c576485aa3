import type { AgentLimit, AgentTurn } from '../agents/agentLimits.js';
import type { AgentLaunch, AgentRunResult } from '../agents/runAgent.js';
import type { LimitSettings } from '../config/runSettings.js';
import { REAL_TIMERS, setLongTimeout, type Timers } from '../process/longTimer.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import type { AgentWaitReason, RunEventInput } from '../sessionFormat/runEvents.js';
import type { LoopGuard } from './loopGuard.js';

/**
 * An agent run that failed for a reason outside its work (`AgentRunResult.limit`:
 * its usage limit, a rate limit, an overloaded or unreachable API) is waited out
 * and run again, rather than counted a failure; a login refused stops the loop.
 * One `LimitWaits` per loop run keeps the time waited in all, against
 * `[limits] max_wait_secs`.
 */

/** When a usage limit does not say when it resets: look again after this long. */
export const USAGE_LIMIT_DEFAULT_WAIT_SECS = 30 * 60;
/** A usage limit that refuses again (its stated reset passed, or it answers once more): the first look again, doubling after. */
export const USAGE_LIMIT_BACKOFF_FIRST_SECS = 5;
/** The first back-off after a rate limit, an overloaded API or an outage; it doubles each time, up to the cap. */
export const BACKOFF_FIRST_SECS = 30;
export const BACKOFF_CAP_SECS = 15 * 60;
/** An outage is tried again this many times before the run counts as a failure after all. */
export const OUTAGE_RETRIES = 4;
/** An agent is run at most this many times in one wait: refused that often, each time after waiting as told, the limit does not lift (`usage_limit`). */
export const WAIT_MAX_TRIES = 10;
/** The furthest ahead a stated reset is believed (a year): a CLI that says later is taken to say this. */
export const MAX_STATED_WAIT_SECS = 366 * 24 * 3600;

/** How the loop's clock and record take part in a wait. */
export interface WaitHooks {
  /** Aborted on the user's interrupt or a guard's stop: the wait ends at once. */
  signal: AbortSignal;
  /**
   * Told before each wait: what is waited for, until when, and how many times the
   * agent was refused in this wait so far (1: the wait begins). The `agent_waiting` event.
   */
  onWaiting(who: WaitingAgent, reason: AgentWaitReason, until: Date, tries: number): void;
  /** Stops and starts the time budget around a wait that does not count (`count_wait = false`). */
  pauseClock(): void;
  resumeClock(): void;
  /** The clock and timer waits run on (the tests' own); absent: the process's. */
  timers?: Timers;
}

/** Who is waited for, for the messages. */
export interface WaitingAgent {
  iteration: number;
  /** The agent's display name (`Claude Code`). */
  agent: string;
  role: 'actor' | 'critic';
  /** Whether its CLI can resume its own session (the turn after a limit carries on there). */
  canResume: boolean;
}

/** Who is waited for: the agent a role's launch runs, in an iteration. */
export function waitingAgentOf(iteration: number, role: 'actor' | 'critic', launch: AgentLaunch): WaitingAgent {
  return { iteration, role, agent: launch.adapter.displayName, canResume: launch.adapter.canResume };
}

/** What an agent resumed after a limit is told: its turn was cut short, and by what. */
export function carryOnPrompt(reason: AgentWaitReason): string {
  const cause = {
    usage_limit: 'your usage limit, which has now reset',
    rate_limited: 'a rate limit',
    overloaded: 'an overloaded API',
    outage: 'an API that could not be reached',
  }[reason];
  return `Your last turn was cut short by ${cause}. Carry on with the task you were working on from where it stopped; do not repeat work that is already done.`;
}

/**
 * The turn to run after a limit: in the agent's own session where its CLI resumes one
 * and the failed run had started one (told to carry on, its cost counted so far),
 * else the same turn afresh.
 */
export function turnAfterLimit(turn: AgentTurn, failed: AgentRunResult, reason: AgentWaitReason, canResume: boolean): AgentTurn {
  if (!canResume || failed.agentSessionId === null) return turn;
  return {
    prompt: carryOnPrompt(reason),
    resumeSessionId: failed.agentSessionId,
    costAlreadyCounted: (turn.costAlreadyCounted ?? 0) + (failed.usage?.costUsd ?? 0),
  };
}

/**
 * When to try again after a limit, the agent refused `tries` times in this wait: at
 * first when the CLI said (a usage limit's reset, a `retry-after`), else a usage
 * limit after the default wait and the others after a back-off. A stated time is no
 * promise: refused again, or past it, the loop backs off (doubling with each try),
 * never before the stated time. Never in the past, never past a year ahead.
 */
export function retryAt(limit: AgentLimit, tries: number, now: number): number {
  const stated = statedTime(limit.until, now);
  if (stated !== null && stated > now && tries <= 1) return stated;
  if (limit.kind === 'usage_limit' && stated === null) return now + USAGE_LIMIT_DEFAULT_WAIT_SECS * 1000;
  // A reset stated to the minute (Codex's `6:23 AM`) is passed while that minute lasts: look again soon, then less often.
  const firstSecs = limit.kind === 'usage_limit' ? USAGE_LIMIT_BACKOFF_FIRST_SECS : BACKOFF_FIRST_SECS;
  const backoff = now + Math.min(firstSecs * 2 ** Math.max(0, tries - 1), BACKOFF_CAP_SECS) * 1000;
  return Math.max(stated ?? now, backoff);
}

/** A time a CLI stated, as far as it is believed: none when it is not a number, at most a year ahead. */
function statedTime(until: number | null, now: number): number | null {
  if (until === null || !Number.isFinite(until)) return null;
  return Math.min(until, now + MAX_STATED_WAIT_SECS * 1000);
}

/** A resumed run that failed before it opened the agent's session, for a reason of its own. */
function couldNotResume(result: AgentRunResult): boolean {
  return !result.succeeded && !result.interrupted && result.limit === null && result.agentSessionId === null;
}

export class LimitWaits {
  private waitedMs = 0;

  constructor(
    private readonly settings: LimitSettings,
    private readonly hooks: WaitHooks,
  ) {}

  /**
   * A loop run's waits: on its guard's signal and clock (a wait that does not count
   * pauses the time budget), each told as the `agent_waiting` event, the one place a
   * wait begins or goes on: what the viewers, the status bar and `[notify]`'s `waiting` hear.
   */
  static forLoop(
    settings: LimitSettings,
    guard: Pick<LoopGuard, 'signal' | 'pauseClock' | 'resumeClock' | 'startClock'>,
    emit: (event: RunEventInput) => void,
  ): LimitWaits {
    return new LimitWaits(settings, {
      signal: guard.signal,
      onWaiting: (who, reason, until, tries) =>
        emit({ type: 'agent_waiting', iteration: who.iteration, role: who.role, agent: who.agent, reason, until: until.toISOString(), tries }),
      pauseClock: () => guard.pauseClock(),
      resumeClock: () => {
        guard.resumeClock();
        guard.startClock();
      },
    });
  }

  /**
   * Runs an agent's turn (`runTurn`) until it ends for a reason of its own: each limit
   * is waited out and the turn run again (`turnAfterLimit`), each failed run told to
   * `reportFailed` before the wait. One call is one wait, however many times the agent
   * is refused in it. Returns the last run: one that succeeded, failed by itself, hit
   * an outage not waited out, or was interrupted during a wait (`interrupted`). Throws
   * `agent_auth` on a refused login, and `usage_limit` when a wait would pass
   * `max_wait_secs`, waiting is off, or the agent was refused `WAIT_MAX_TRIES` times.
   */
  async outlast(
    who: WaitingAgent,
    first: AgentTurn,
    runTurn: (turn: AgentTurn) => Promise<AgentRunResult>,
    reportFailed: (failed: AgentRunResult) => void = () => {},
  ): Promise<AgentRunResult> {
    let turn = first;
    let result = await runTurn(turn);
    for (let tries = 1, limit = result.limit; limit !== null && !result.interrupted && !result.succeeded; tries++, limit = result.limit) {
      const reason = limit.kind;
      if (reason === 'auth') {
        throw new CodeloopsError('agent_auth', `${who.agent} (the ${who.role}) could not log in: ${limit.message}`, { agent: who.agent, role: who.role });
      }
      const until = this.allowedWait(who, { ...limit, kind: reason }, tries);
      if (until === null) return result;
      reportFailed(result);
      if (!(await this.wait(who, reason, until, tries))) return { ...result, interrupted: true };
      const again = turnAfterLimit(turn, result, reason, who.canResume);
      result = await runTurn(again);
      if (again !== turn && couldNotResume(result)) {
        // Its session was not kept (Gemini CLI keeps none whose first turn failed): the turn afresh.
        reportFailed(result);
        result = await runTurn(turn);
      } else turn = again;
    }
    return result;
  }

  /**
   * When to run again, within what is left of `max_wait_secs`; null: not waited out,
   * the run counts as failed (an outage, which keeps its own outcome, or any limit but
   * a usage limit while waiting is off). A usage limit, a rate limit or an overloaded
   * API that cannot be waited out ends the loop (`usage_limit`).
   */
  private allowedWait(who: WaitingAgent, limit: AgentLimit & { kind: AgentWaitReason }, tries: number): number | null {
    const now = this.now();
    const until = retryAt(limit, tries, now);
    const { wait, maxWaitSecs } = this.settings;
    const waitingOff = !wait || maxWaitSecs === 0;
    const pastMaxWait = this.waitedMs + (until - now) > maxWaitSecs * 1000;
    if (limit.kind === 'outage' && (waitingOff || tries > OUTAGE_RETRIES || pastMaxWait)) return null;
    if (waitingOff && limit.kind !== 'usage_limit') return null;
    const what = limit.kind === 'usage_limit' ? 'usage limit' : 'API';
    const why = waitingOff
      ? `${who.agent} (the ${who.role}) reached its usage limit, and waiting for limits is off (${wait ? 'max_wait_secs = 0' : 'wait = false'})`
      : tries >= WAIT_MAX_TRIES
        ? `${who.agent}'s ${what} (the ${who.role}) refused it ${tries} times in a row, each time after the wait it was told: it does not lift`
        : pastMaxWait
          ? `${who.agent}'s ${what} (the ${who.role}) would have the loop wait until ${new Date(until).toISOString()}: ` +
            `more than the ${maxWaitSecs} s the limits allow in all (max_wait_secs)`
          : null;
    if (why === null) return until;
    throw new CodeloopsError('usage_limit', `${why}. It said: ${limit.message}`, {
      agent: who.agent,
      role: who.role,
      reason: limit.kind,
      until: new Date(until).toISOString(),
    });
  }

  /** Waits until `until`, the clock paused unless the wait counts; false when the signal ended it first. */
  private async wait(who: WaitingAgent, reason: AgentWaitReason, until: number, tries: number): Promise<boolean> {
    const { signal } = this.hooks;
    if (signal.aborted) return false;
    this.hooks.onWaiting(who, reason, new Date(until), tries);
    const started = this.now();
    if (!this.settings.countWait) this.hooks.pauseClock();
    try {
      return await new Promise<boolean>((resolve) => {
        const done = (finished: boolean) => {
          cancel();
          signal.removeEventListener('abort', aborted);
          resolve(finished);
        };
        const aborted = () => done(false);
        // A reset weeks ahead is past what one timer holds: waited out in steps.
        const cancel = setLongTimeout(() => done(true), until - started, { timers: this.hooks.timers });
        signal.addEventListener('abort', aborted, { once: true });
      });
    } finally {
      this.waitedMs += this.now() - started;
      if (!this.settings.countWait) this.hooks.resumeClock();
    }
  }

  private now(): number {
    return (this.hooks.timers ?? REAL_TIMERS).now();
  }
}
