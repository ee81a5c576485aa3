import type { Usage } from '../sessionFormat/agentEvents.js';

/** A model's list prices in US dollars per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  cache_read?: number;
  cache_write?: number;
}

export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * List prices of common models, for agents that report tokens but no dollars (and
 * for the running estimate while an agent that reports dollars only at its end is at
 * work). Overridden or extended by `[prices."<model>"]` in the config; a cost made
 * from this table is marked as estimated wherever it is shown.
 */
export const DEFAULT_PRICES: PriceTable = {
  'claude-opus-4-5': { input: 5, output: 25, cache_read: 0.5, cache_write: 6.25 },
  'claude-opus-4': { input: 15, output: 75, cache_read: 1.5, cache_write: 18.75 },
  opus: { input: 5, output: 25, cache_read: 0.5, cache_write: 6.25 },
  'claude-sonnet-4': { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
  'claude-3-7-sonnet': { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
  sonnet: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
  'claude-haiku-4-5': { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cache_read: 0.08, cache_write: 1 },
  haiku: { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cache_read: 0.005 },
  'gpt-5-mini': { input: 0.25, output: 2, cache_read: 0.025 },
  'gpt-5': { input: 1.25, output: 10, cache_read: 0.125 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cache_read: 0.1 },
  'gpt-4.1': { input: 2, output: 8, cache_read: 0.5 },
  'o4-mini': { input: 1.1, output: 4.4, cache_read: 0.275 },
  o3: { input: 2, output: 8, cache_read: 0.5 },
  'gemini-2.5-pro': { input: 1.25, output: 10, cache_read: 0.31 },
  'gemini-2.5-flash-lite': { input: 0.1, output: 0.4, cache_read: 0.025 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5, cache_read: 0.075 },
};

/**
 * The price of a model as agents name it: `claude-sonnet-4-5-20250929`,
 * `anthropic/claude-sonnet-4-5` or `sonnet` all find `claude-sonnet-4-5`'s entry (or
 * the longest entry the name starts with). Undefined when nothing fits.
 */
export function priceFor(model: string | null | undefined, table: PriceTable): ModelPrice | undefined {
  if (!model) return undefined;
  const name = model
    .trim()
    .toLowerCase()
    .replace(/^[a-z0-9_-]+\//, '');
  if (table[name]) return table[name];
  const prefix = Object.keys(table)
    .filter((key) => name.startsWith(key))
    .sort((a, b) => b.length - a.length)[0];
  return prefix ? table[prefix] : undefined;
}

/**
 * The dearest price of the table for each kind of token: what the tokens of a model
 * the table does not know are counted at while its agent has not said what they cost,
 * so that a cost cap holds for every model (an estimate too high stops early; one too
 * low would not stop at all).
 */
export function highestPrice(table: PriceTable): ModelPrice {
  const prices = Object.values(table);
  const highest = (of: (price: ModelPrice) => number) => prices.reduce((most, price) => Math.max(most, of(price)), 0);
  return {
    input: highest((price) => price.input),
    output: highest((price) => price.output),
    cache_read: highest((price) => price.cache_read ?? price.input),
    cache_write: highest((price) => price.cache_write ?? price.input),
  };
}

/** Dollars for the tokens of a usage at a price (cache tokens at their own prices, else as input). */
export function costOf(usage: Usage, price: ModelPrice): number {
  const perToken = (perMillion: number) => perMillion / 1_000_000;
  return (
    (usage.inputTokens ?? 0) * perToken(price.input) +
    (usage.outputTokens ?? 0) * perToken(price.output) +
    (usage.cacheReadTokens ?? 0) * perToken(price.cache_read ?? price.input) +
    (usage.cacheWriteTokens ?? 0) * perToken(price.cache_write ?? price.input)
  );
}

/** Every token a usage counts: input, output, and both kinds of cache. */
export function tokensOf(usage: Usage): number {
  return (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0) + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
}
