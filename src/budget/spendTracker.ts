import type { Usage } from '../sessionFormat/agentEvents.js';
import type { StopReason } from '../sessionFormat/sessionLines.js';
import { costOf, highestPrice, priceFor, tokensOf, type ModelPrice, type PriceTable } from './prices.js';

/** What a loop may use, all agent runs together; null: no cap. */
export interface Budget {
  maxCostUsd: number | null;
  maxTokens: number | null;
  maxDurationSecs: number | null;
}

export interface SpendTotals {
  /** Dollars, reported or estimated; null while no run has reported any usage. */
  costUsd: number | null;
  tokens: number;
  /** Part of the cost comes from the price table, not from an agent. */
  costEstimated: boolean;
}

interface RunSpend {
  costUsd: number;
  tokens: number;
  estimated: boolean;
}

/**
 * The running totals of a loop: what earlier runs used (and, after a resume, what
 * the sessions it carries on used), plus what the runs under way have reported so
 * far. Each agent run reports its own running totals as it goes; a cost it does not
 * report (yet: Claude Code says it only at the end of its turn) is estimated from its
 * tokens at its model's price, or at the table's highest price for a model the table
 * does not know. What an agent says it cost replaces the estimate.
 */
export class SpendTracker {
  private readonly done: SpendTotals;
  private readonly live = new Map<string, RunSpend>();
  /** Models whose tokens were counted at the highest price, for want of their own. */
  private readonly unpriced = new Set<string>();

  constructor(
    private readonly prices: PriceTable,
    earlier: SpendTotals = { costUsd: null, tokens: 0, costEstimated: false },
  ) {
    this.done = { ...earlier };
  }

  /**
   * A run's running totals so far (`run` names the run, say "3/actor"). Its tokens only
   * grow: a stopped agent's last word (Claude Code's result after a signal) may leave
   * out the model call it was stopped in, already paid for. Its cost is the agent's own
   * figure once it gives one, else the larger estimate.
   */
  update(run: string, usage: Usage, model: string | null): void {
    const spend = this.spendOf(usage, model);
    const before = this.live.get(run);
    this.live.set(run, before ? combined(before, spend) : spend);
  }

  /** A run ended: its totals become part of what is done (its final account and its running totals, combined as in `update`). */
  finish(run: string, usage: Usage | null, model: string | null): void {
    const final = usage ? this.spendOf(usage, model) : undefined;
    const running = this.live.get(run);
    this.live.delete(run);
    const spend = final && running ? combined(running, final) : (final ?? running);
    if (!spend) return;
    this.done.tokens += spend.tokens;
    this.done.costUsd = (this.done.costUsd ?? 0) + spend.costUsd;
    this.done.costEstimated ||= spend.estimated;
  }

  totals(): SpendTotals {
    const totals = { ...this.done };
    for (const spend of this.live.values()) {
      totals.tokens += spend.tokens;
      totals.costUsd = (totals.costUsd ?? 0) + spend.costUsd;
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

  /** The models (as agents named them) whose tokens were counted at the table's highest price; "" for runs that named none. */
  unpricedModels(): string[] {
    return [...this.unpriced];
  }

  private spendOf(usage: Usage, model: string | null): RunSpend {
    const tokens = tokensOf(usage);
    if (usage.costUsd !== undefined) return { costUsd: usage.costUsd, tokens, estimated: false };
    return { costUsd: costOf(usage, this.priceOf(model)), tokens, estimated: true };
  }

  private priceOf(model: string | null): ModelPrice {
    const price = priceFor(model, this.prices);
    if (price) return price;
    this.unpriced.add(model ?? '');
    return highestPrice(this.prices);
  }
}

/**
 * One run's totals from two of its reports: the most tokens either counted; the
 * agent's own cost over an estimate (a price table only guesses), else the larger.
 */
function combined(a: RunSpend, b: RunSpend): RunSpend {
  const cost = a.estimated !== b.estimated ? (a.estimated ? b : a) : a.costUsd >= b.costUsd ? a : b;
  return { tokens: Math.max(a.tokens, b.tokens), costUsd: cost.costUsd, estimated: cost.estimated };
}
