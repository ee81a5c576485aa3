import type { Usage } from '../sessionFormat/agentEvents.js';
import type { StopReason } from '../sessionFormat/sessionLines.js';
import { costOf, priceFor, tokensOf, type PriceTable } from './prices.js';

/** What a loop may use, all agent runs together; null: no cap. */
export interface Budget {
  maxCostUsd: number | null;
  maxTokens: number | null;
  maxDurationSecs: number | null;
}

export interface SpendTotals {
  /** Dollars, reported or estimated; null while no run has a cost (an unknown model reports only tokens). */
  costUsd: number | null;
  tokens: number;
  /** Part of the cost comes from the price table, not from an agent. */
  costEstimated: boolean;
}

interface RunSpend {
  costUsd: number | null;
  tokens: number;
  estimated: boolean;
}

/**
 * The running totals of a loop: what earlier runs used (and, after a resume, what
 * the sessions it carries on used), plus what the runs under way have reported so
 * far. Each agent run reports its own running totals as it goes; a cost it does not
 * report is estimated from its tokens at its model's price.
 */
export class SpendTracker {
  private readonly done: SpendTotals;
  private readonly live = new Map<string, RunSpend>();

  constructor(
    private readonly prices: PriceTable,
    earlier: SpendTotals = { costUsd: null, tokens: 0, costEstimated: false },
  ) {
    this.done = { ...earlier };
  }

  /**
   * A run's running totals so far (`run` names the run, say "3/actor"). They only
   * grow: a stopped agent's last word (Claude Code's result after a signal) may leave
   * out the model call it was stopped in, already paid for.
   */
  update(run: string, usage: Usage, model: string | null): void {
    const spend = this.spendOf(usage, model);
    const before = this.live.get(run);
    this.live.set(run, before ? larger(before, spend) : spend);
  }

  /** A run ended: its totals become part of what is done (the larger of its final account and its running totals). */
  finish(run: string, usage: Usage | null, model: string | null): void {
    const final = usage ? this.spendOf(usage, model) : undefined;
    const running = this.live.get(run);
    this.live.delete(run);
    const spend = final && running ? larger(final, running) : (final ?? running);
    if (!spend) return;
    this.done.tokens += spend.tokens;
    if (spend.costUsd !== null) this.done.costUsd = (this.done.costUsd ?? 0) + spend.costUsd;
    this.done.costEstimated ||= spend.estimated;
  }

  totals(): SpendTotals {
    const totals = { ...this.done };
    for (const spend of this.live.values()) {
      totals.tokens += spend.tokens;
      if (spend.costUsd !== null) totals.costUsd = (totals.costUsd ?? 0) + spend.costUsd;
      totals.costEstimated ||= spend.estimated;
    }
    return totals;
  }

  /** The budget cap the totals have crossed, if any (time is watched by the loop's clock). */
  crossed(budget: Budget): Extract<StopReason, 'budget_cost' | 'budget_tokens'> | null {
    const totals = this.totals();
    if (budget.maxTokens !== null && totals.tokens > budget.maxTokens) return 'budget_tokens';
    if (budget.maxCostUsd !== null && totals.costUsd !== null && totals.costUsd > budget.maxCostUsd) return 'budget_cost';
    return null;
  }

  private spendOf(usage: Usage, model: string | null): RunSpend {
    const tokens = tokensOf(usage);
    if (usage.costUsd !== undefined) return { costUsd: usage.costUsd, tokens, estimated: false };
    const price = priceFor(model, this.prices);
    return price ? { costUsd: costOf(usage, price), tokens, estimated: true } : { costUsd: null, tokens, estimated: false };
  }
}

function larger(a: RunSpend, b: RunSpend): RunSpend {
  const cost = a.costUsd === null ? b : b.costUsd === null ? a : a.costUsd >= b.costUsd ? a : b;
  return { tokens: Math.max(a.tokens, b.tokens), costUsd: cost.costUsd, estimated: cost.estimated };
}
