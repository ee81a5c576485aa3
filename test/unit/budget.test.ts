import assert from 'node:assert/strict';
import { DEFAULT_PRICES, costOf, highestPrice, priceFor } from '../../src/budget/prices.js';
import { SpendTracker } from '../../src/budget/spendTracker.js';

const NO_CAP = { maxCostUsd: null, maxTokens: null, maxDurationSecs: null };

describe('budget: prices and running totals', () => {
  it('finds a model price by the names agents use, and converts tokens to dollars', () => {
    assert.equal(priceFor('claude-sonnet-4-5-20250929', DEFAULT_PRICES), DEFAULT_PRICES['claude-sonnet-4']);
    assert.equal(priceFor('anthropic/claude-haiku-4-5', DEFAULT_PRICES), DEFAULT_PRICES['claude-haiku-4-5']);
    assert.equal(priceFor('gpt-5-mini-2025-08-07', DEFAULT_PRICES), DEFAULT_PRICES['gpt-5-mini'], 'the longest name that fits');
    assert.equal(priceFor('a-model-nobody-knows', DEFAULT_PRICES), undefined);
    assert.equal(costOf({ inputTokens: 1_000_000, outputTokens: 100_000 }, { input: 3, output: 15 }), 4.5);
  });

  it('adds what runs report as they go to what earlier runs and sessions used, and says which cap is crossed', () => {
    const spend = new SpendTracker(DEFAULT_PRICES, { costUsd: 1, tokens: 10_000, costEstimated: false });
    spend.update('1/actor', { inputTokens: 5_000, outputTokens: 1_000, costUsd: 0.5 }, null);
    assert.deepEqual(spend.totals(), { costUsd: 1.5, tokens: 16_000, costEstimated: false });
    assert.equal(spend.crossed({ ...NO_CAP, maxTokens: 16_000 }), null, 'at the cap is not over it');
    assert.equal(spend.crossed({ ...NO_CAP, maxTokens: 15_999 }), 'budget_tokens');
    assert.equal(spend.crossed({ ...NO_CAP, maxCostUsd: 1.25 }), 'budget_cost');
    spend.finish('1/actor', { inputTokens: 5_000, outputTokens: 2_000, costUsd: 0.6 }, null);
    assert.deepEqual(spend.totals(), { costUsd: 1.6, tokens: 17_000, costEstimated: false });
  });

  it('estimates the cost of tokens without dollars at the model price, and says it is estimated', () => {
    const spend = new SpendTracker(DEFAULT_PRICES);
    spend.update('1/actor', { inputTokens: 1_000_000 }, 'gpt-5');
    assert.deepEqual(spend.totals(), { costUsd: 1.25, tokens: 1_000_000, costEstimated: true });
  });

  it('counts the tokens of a model the table does not know at its highest price, marked estimated, until the agent says what they cost', () => {
    const dearest = highestPrice(DEFAULT_PRICES);
    assert.deepEqual(dearest, { input: 15, output: 75, cache_read: 1.5, cache_write: 18.75 }, 'the dearest of each kind of token');
    const spend = new SpendTracker(DEFAULT_PRICES);
    spend.update('1/actor', { inputTokens: 1_000, outputTokens: 100 }, 'a-model-nobody-knows');
    assert.deepEqual(spend.totals(), { costUsd: 0.0225, tokens: 1_100, costEstimated: true });
    assert.equal(spend.crossed({ ...NO_CAP, maxCostUsd: 0.02 }), 'budget_cost', 'a cap holds for a model without a price');
    assert.deepEqual(spend.unpricedModels(), ['a-model-nobody-knows']);
    // Its own figure at the end of the turn, lower than the estimate: the session records it.
    spend.update('1/actor', { inputTokens: 1_000, outputTokens: 100, costUsd: 0.004 }, 'a-model-nobody-knows');
    assert.deepEqual(spend.totals(), { costUsd: 0.004, tokens: 1_100, costEstimated: false });
    spend.finish('1/actor', { inputTokens: 1_000, outputTokens: 100, costUsd: 0.004 }, 'a-model-nobody-knows');
    assert.deepEqual(spend.totals(), { costUsd: 0.004, tokens: 1_100, costEstimated: false });
    // An agent that names no model and never says a cost (Codex): estimated all the way.
    const codex = new SpendTracker(DEFAULT_PRICES);
    codex.finish('1/actor', { inputTokens: 1_000_000 }, null);
    assert.deepEqual(codex.totals(), { costUsd: 15, tokens: 1_000_000, costEstimated: true });
  });

  it('keeps the running total of a run stopped mid-call, whose final account leaves that call out', () => {
    const spend = new SpendTracker(DEFAULT_PRICES);
    spend.update('1/actor', { inputTokens: 51_000 }, 'claude-sonnet-4');
    spend.update('1/actor', { inputTokens: 1_000, outputTokens: 22 }, 'claude-sonnet-4');
    assert.equal(spend.totals().tokens, 51_000, 'a running total never goes down');
    spend.finish('1/actor', { inputTokens: 1_000, outputTokens: 22, costUsd: 0.2 }, 'claude-sonnet-4');
    const totals = spend.totals();
    assert.equal(totals.tokens, 51_000);
    assert.equal(totals.costUsd, 0.2, "the agent's own dollars replace the estimate");
  });
});
