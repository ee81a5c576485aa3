import assert from 'node:assert/strict';
import { budgetSuggestion, forecastLine, suggestedMaxCostUsd } from '../../src/sessionFormat/forecast.js';
import { percentile } from '../../src/sessions/forecast.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { CODEX_FORECAST, GARDEN_FORECAST, PAIR_A, SHOP_FORECAST, writeForecastSessions } from '../support/forecastSessions.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

describe('forecast: percentiles of past tasks with the same actor and critic', () => {
  after(removeTempDirs);

  it('takes the nearest rank, as worked out by hand', () => {
    // The textbook example of the method: ranks ⌈p × 5 / 100⌉.
    const values = [50, 15, 40, 20, 35];
    assert.deepEqual(
      [5, 30, 40, 50, 90, 100].map((p) => percentile(values, p)),
      [15, 20, 20, 35, 50, 50],
    );
    // Ten values: the median is the 5th, the p90 the 9th (not the mean of two, not interpolated).
    const ten = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3];
    assert.deepEqual([percentile(ten, 50), percentile(ten, 90)], [3, 6]);
    assert.equal(percentile([7], 90), 7);
    assert.equal(percentile([], 50), null);
  });

  it('suggests the p90 cost rounded up to two significant digits, and only when no budget is set', () => {
    assert.deepEqual(
      [0.372, 3.72, 37.2, 2.1, 2.43, 0.05].map((p90) => suggestedMaxCostUsd({ ...SHOP_FORECAST, cost_usd: { p50: 0, p90 } })),
      [0.38, 3.8, 38, 2.1, 2.5, 0.05],
    );
    assert.equal(suggestedMaxCostUsd(CODEX_FORECAST), null);
    assert.match(budgetSuggestion(SHOP_FORECAST, null)!, /^max_cost_usd = 2\.5 \(the p90 cost, rounded up\)$/);
    assert.equal(budgetSuggestion(SHOP_FORECAST, 10), undefined, 'a budget is set');
  });

  it("forecasts from this project's finished tasks, failed ones included, a resumed chain as one task", async () => {
    const dir = tempDir();
    writeForecastSessions(dir);
    const store = new SessionStore(dir, () => {}, { indexFile: null });
    assert.deepEqual(await store.forecast(PAIR_A, 'shop'), SHOP_FORECAST);
  });

  it('falls back to all projects when the project has fewer than five, and says so with fewer than five anywhere', async () => {
    const dir = tempDir();
    writeForecastSessions(dir);
    const store = new SessionStore(dir, () => {}, { indexFile: null });
    assert.deepEqual(await store.forecast(PAIR_A, 'garden'), GARDEN_FORECAST);
    assert.deepEqual(await store.forecast({ ...PAIR_A, actor_agent: 'Codex' }, 'shop'), CODEX_FORECAST);
    // The model counts, the critic's and the actor's: one task with an opus critic, one with a sonnet actor.
    assert.deepEqual(await store.forecast({ ...PAIR_A, critic_model: 'opus' }, 'shop'), { ...CODEX_FORECAST, basis: 1 });
    assert.deepEqual(await store.forecast({ ...PAIR_A, actor_model: 'sonnet' }, 'shop'), { ...CODEX_FORECAST, basis: 1 });
    assert.deepEqual(await store.forecast({ ...PAIR_A, actor_model: 'sonnet', critic_model: 'opus' }, 'shop'), { ...CODEX_FORECAST, basis: 0 });
    assert.equal(forecastLine(CODEX_FORECAST), 'No forecast: 3 past tasks with these agents and models, at least 5 needed.');
  });
});
