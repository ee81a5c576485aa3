import type { AgentLimit, AgentTurn } from '../agents/agentLimits.js';
import type { AgentRunResult } from '../agents/runAgent.js';
import type { LimitSettings } from '../config/runSettings.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import type { AgentWaitReason } from '../sessionFormat/runEvents.js';

/**
 * An agent run that failed for a reason outside its work (`AgentRunResult.limit`:
 * its usage limit, a rate limit, an overloaded or unreachable API) is waited out
 * and run again, rather than counted a failure; a login refused stops the loop.
 * One `LimitWaits` per loop run keeps the time waited in all, against
 * `[limits] max_wait_secs`.
 */

/** When a usage limit does not say when it resets: look again after this long. */
export const USAGE_LIMIT_DEFAULT_WAIT_SECS = 30 * 60;
/** When a usage limit's stated reset has passed and it still refuses: the first look again, doubling after. */
export const USAGE_LIMIT_PASSED_FIRST_SECS = 5;
/** The first back-off after a rate limit, an overloaded API or an outage; it doubles each time, up to the cap. */
export const BACKOFF_FIRST_SECS = 30;
export const BACKOFF_CAP_SECS = 15 * 60;
/** An outage is tried again this many times before the run counts as a failure after all. */
export const OUTAGE_RETRIES = 4;

/** How the loop's clock and record take part in a wait. */
export interface WaitHooks {
  /** Aborted on the user's interrupt or a guard's stop: the wait ends at once. */
  signal: AbortSignal;
  /** Told before each wait: what is waited for and until when (the `agent_waiting` event). */
  onWaiting(who: WaitingAgent, reason: AgentWaitReason, until: Date): void;
  /** Stops and starts the time budget around a wait that does not count (`count_wait = false`). */
  pauseClock(): void;
  resumeClock(): void;
  now?: () => number;
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
 * When to try again after a limit: when the CLI said (a usage limit's reset, a
 * `retry-after`); else a usage limit after the default wait, the others after a
 * back-off that doubles with each try in a row. Never in the past.
 */
export function retryAt(limit: AgentLimit, triesInARow: number, now: number): number {
  if (limit.until !== null && limit.until > now) return limit.until;
  const backoff = (firstSecs: number) => now + Math.min(firstSecs * 2 ** Math.max(0, triesInARow - 1), BACKOFF_CAP_SECS) * 1000;
  if (limit.kind !== 'usage_limit') return backoff(BACKOFF_FIRST_SECS);
  // A reset stated to the minute (Codex's `6:23 AM`) is passed while that minute lasts: look again soon, then less often.
  return limit.until === null ? now + USAGE_LIMIT_DEFAULT_WAIT_SECS * 1000 : backoff(USAGE_LIMIT_PASSED_FIRST_SECS);
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
   * Runs an agent's turn (`runTurn`) until it ends for a reason of its own: each limit
   * is waited out and the turn run again (`turnAfterLimit`), each failed run told to
   * `reportFailed` before the wait. Returns the last run: one that succeeded, failed
   * by itself, or was interrupted during a wait (`interrupted`). Throws `agent_auth`
   * on a refused login and `usage_limit` when a wait would pass `max_wait_secs` (or
   * waiting is off).
   */
  async outlast(
    who: WaitingAgent,
    first: AgentTurn,
    runTurn: (turn: AgentTurn) => Promise<AgentRunResult>,
    reportFailed: (failed: AgentRunResult) => void = () => {},
  ): Promise<AgentRunResult> {
    let turn = first;
    let result = await runTurn(turn);
    let tries = 0;
    for (let limit = result.limit; limit !== null && !result.interrupted && !result.succeeded; limit = result.limit) {
      const reason = limit.kind;
      if (reason === 'auth') {
        throw new CodeloopsError('agent_auth', `${who.agent} (the ${who.role}) could not log in: ${limit.message}`, { agent: who.agent, role: who.role });
      }
      tries += 1;
      if (reason === 'outage' && tries > OUTAGE_RETRIES) return result;
      const until = this.allowedWait(who, { ...limit, kind: reason }, tries);
      if (until === null) return result;
      reportFailed(result);
      if (!(await this.wait(who, reason, until))) return { ...result, interrupted: true };
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

  /** When to run again, within what is left of `max_wait_secs`; null: not waited out, the run counts as failed. */
  private allowedWait(who: WaitingAgent, limit: AgentLimit & { kind: AgentWaitReason }, tries: number): number | null {
    const now = this.now();
    const until = retryAt(limit, tries, now);
    const what = limit.kind === 'usage_limit' ? 'usage limit' : 'API';
    if (!this.settings.wait) {
      if (limit.kind !== 'usage_limit') return null;
      throw new CodeloopsError('usage_limit', `${who.agent} (the ${who.role}) reached its usage limit, and waiting for limits is off: ${limit.message}`, {
        agent: who.agent,
        role: who.role,
        until: new Date(until).toISOString(),
      });
    }
    if (this.waitedMs + (until - now) > this.settings.maxWaitSecs * 1000) {
      throw new CodeloopsError(
        'usage_limit',
        `${who.agent}'s ${what} (the ${who.role}) would have the loop wait until ${new Date(until).toISOString()}: ` +
          `more than the ${this.settings.maxWaitSecs} s the limits allow in all (max_wait_secs). It said: ${limit.message}`,
        { agent: who.agent, role: who.role, reason: limit.kind, until: new Date(until).toISOString() },
      );
    }
    return until;
  }

  /** Waits until `until`, the clock paused unless the wait counts; false when the signal ended it first. */
  private async wait(who: WaitingAgent, reason: AgentWaitReason, until: number): Promise<boolean> {
    const { signal } = this.hooks;
    if (signal.aborted) return false;
    this.hooks.onWaiting(who, reason, new Date(until));
    const started = this.now();
    if (!this.settings.countWait) this.hooks.pauseClock();
    try {
      return await new Promise<boolean>((resolve) => {
        const done = (finished: boolean) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', aborted);
          resolve(finished);
        };
        const aborted = () => done(false);
        const timer = setTimeout(() => done(true), Math.max(0, until - started));
        signal.addEventListener('abort', aborted, { once: true });
      });
    } finally {
      this.waitedMs += this.now() - started;
      if (!this.settings.countWait) this.hooks.resumeClock();
    }
  }

  private now(): number {
    return this.hooks.now?.() ?? Date.now();
  }
}
