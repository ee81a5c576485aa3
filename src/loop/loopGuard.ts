import type { PriceTable } from '../budget/prices.js';
import { SpendTracker, type Budget, type SpendTotals } from '../budget/spendTracker.js';
import { setLongTimeout } from '../process/longTimer.js';
import type { Usage } from '../sessionFormat/agentEvents.js';
import type { RunEventInput, Spend } from '../sessionFormat/runEvents.js';
import type { StopReason } from '../sessionFormat/sessionLines.js';

/** How often, at most, the running totals are reported while an agent works. */
export const SPEND_EVENT_INTERVAL_MS = 1_000;

/** A guard that ended the loop while something ran: why, in words. */
export interface GuardStop {
  reason: Exclude<StopReason, 'stalled'>;
  message: string;
}

export interface LoopGuardOptions {
  budget: Budget;
  /** Prices for the agents that report tokens but no cost. */
  prices: PriceTable;
  /** What the sessions a resumed run carries on used: the budget counts on from there, it does not start again. */
  earlier?: SpendTotals & { durationSecs: number };
  /** The user's interrupt: it stops what runs as a guard does, but is no guard's stop. */
  interrupt: AbortSignal;
  /** Where the guard's `spend` events and the warning with its stop message go. */
  report: (event: RunEventInput) => void;
  /** Milliseconds from a steady clock (`performance.now` unless a test brings its own). */
  now?: () => number;
}

/**
 * The loop's budget and clock: what the agents spent, how long the loop has run
 * without its pauses for the user's review, and the stop when either crosses its cap.
 * Its `signal` joins the user's interrupt and the guard's own stop: every agent and
 * check of the run listens to it, so a budget crossed mid-turn stops the agent at once
 * (its whole process group), as Ctrl+C would.
 */
export class LoopGuard {
  private readonly stopper = new AbortController();
  private readonly spent: SpendTracker;
  private readonly now: () => number;
  private readonly started: number;
  private readonly earlierSecs: number;
  private stopped: GuardStop | null = null;
  private lastSpendReport = Number.NEGATIVE_INFINITY;
  /** Cancels the time cap's timer (a budget of weeks is waited out in steps: `setLongTimeout`). */
  private cancelClock: () => void = () => {};
  /** Time spent waiting for the user's review: it does not count against the time budget. */
  private pausedMs = 0;
  private pausedAt: number | null = null;

  constructor(private readonly options: LoopGuardOptions) {
    this.now = options.now ?? (() => performance.now());
    this.started = this.now();
    this.spent = new SpendTracker(options.prices, options.earlier);
    this.earlierSecs = options.earlier?.durationSecs ?? 0;
    const interrupt = options.interrupt;
    if (interrupt.aborted) this.stopper.abort();
    else interrupt.addEventListener('abort', () => this.stopper.abort(), { once: true });
  }

  /** Aborted by the user's interrupt and by a guard's stop. */
  get signal(): AbortSignal {
    return this.stopper.signal;
  }

  /** Why a guard stopped the loop; null while none has. */
  get stop(): GuardStop | null {
    return this.stopped;
  }

  /** Starts (or, after a pause, restarts) the time cap: the loop ends when it runs out, whatever is running then. */
  startClock(): void {
    const { maxDurationSecs } = this.options.budget;
    this.cancelClock();
    if (maxDurationSecs === null) return;
    const leftMs = (maxDurationSecs - this.activeSecs()) * 1000;
    const stop = () =>
      this.stopFor(
        'duration',
        `The loop ran for its whole time budget of ${formatSeconds(maxDurationSecs)}${this.earlierSecs > 0 ? ' (counting the sessions it carries on)' : ''}.`,
      );
    if (leftMs <= 0) stop();
    else this.cancelClock = setLongTimeout(stop, leftMs);
  }

  /** Stops the time cap's clock: the loop waits for the user. */
  pauseClock(): void {
    this.cancelClock();
    this.pausedAt ??= this.now();
  }

  /** Counts the time again after `pauseClock`; the seconds it was paused. The cap runs again from `startClock`. */
  resumeClock(): number {
    const pausedMs = this.pausedAt === null ? 0 : this.now() - this.pausedAt;
    this.pausedAt = null;
    this.pausedMs += pausedMs;
    return pausedMs / 1000;
  }

  /** The loop ended: no stop can come any more. */
  stopClock(): void {
    this.cancelClock();
  }

  /** An agent run's running totals so far (`run` names it, say "3/actor"), as it streams them. */
  usageReported(run: string, usage: Usage, model: string | null): void {
    this.spent.update(run, usage, model);
    this.reportSpend(false);
    this.checkBudget();
  }

  /** An agent run ended, with its own account of what it used (if it gave one). */
  runFinished(run: string, usage: Usage | null, model: string | null): void {
    this.spent.finish(run, usage, model);
    this.reportSpend(true);
    this.checkBudget();
  }

  totals(): SpendTotals {
    return this.spent.totals();
  }

  /** The running totals as the `spend` event carries them. */
  spend(): Spend {
    const totals = this.spent.totals();
    return { total_cost_usd: totals.costUsd, total_tokens: totals.tokens, cost_estimated: totals.costEstimated, elapsed_secs: this.activeSecs() };
  }

  /** The time the budget counts: this run's and the carried-on sessions', without the pauses for review. */
  activeSecs(): number {
    const pausing = this.pausedAt === null ? 0 : this.now() - this.pausedAt;
    return this.earlierSecs + (this.now() - this.started - this.pausedMs - pausing) / 1000;
  }

  /** This run's own time, pauses included, to the millisecond: what the session records as its duration. */
  runSecs(): number {
    return Math.round(((this.now() - this.started) / 1000) * 1000) / 1000;
  }

  /** The running totals, as they change: at most about once a second while an agent streams, and after each run. */
  private reportSpend(always: boolean): void {
    const now = this.now();
    if (!always && now - this.lastSpendReport < SPEND_EVENT_INTERVAL_MS) return;
    this.lastSpendReport = now;
    this.options.report({ type: 'spend', ...this.spend() });
  }

  private checkBudget(): void {
    const crossed = this.spent.crossed(this.options.budget);
    if (crossed) this.stopFor(crossed, this.budgetMessage(crossed));
  }

  /** A guard's stop: whatever runs is stopped as on an interrupt (its whole process group), and the loop ends `failed`. */
  private stopFor(reason: GuardStop['reason'], message: string): void {
    if (this.stopped) return;
    this.stopped = { reason, message };
    this.options.report({ type: 'warning', message });
    this.stopper.abort();
  }

  private budgetMessage(crossed: 'budget_cost' | 'budget_tokens'): string {
    const totals = this.spent.totals();
    const { budget } = this.options;
    if (crossed === 'budget_tokens')
      return `The agents used ${totals.tokens.toLocaleString('en-US')} tokens, over the budget of ${budget.maxTokens!.toLocaleString('en-US')}.`;
    const unpriced = this.spent.unpricedModels().map((model) => (model ? `"${model}"` : 'a model the agent did not name'));
    return (
      `The agents' cost reached $${(totals.costUsd ?? 0).toFixed(2)}${totals.costEstimated ? ' (partly estimated)' : ''}, over the budget of $${budget.maxCostUsd!.toFixed(2)}.` +
      (unpriced.length > 0
        ? ` The price table has no price for ${unpriced.join(', ')}: until its agent says what they cost, its tokens count at the table's highest price (a [prices."<model>"] entry in the config counts them at theirs).`
        : '')
    );
  }
}

function formatSeconds(seconds: number): string {
  return seconds % 3600 === 0 ? `${seconds / 3600} h` : seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
}
