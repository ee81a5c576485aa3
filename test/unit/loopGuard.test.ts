import assert from 'node:assert/strict';
import { once } from 'node:events';
import { DEFAULT_PRICES } from '../../src/budget/prices.js';
import type { Budget } from '../../src/budget/spendTracker.js';
import { LoopGuard, SPEND_EVENT_INTERVAL_MS, type LoopGuardOptions } from '../../src/loop/loopGuard.js';
import type { RunEventInput } from '../../src/sessionFormat/runEvents.js';

const NO_CAP: Budget = { maxCostUsd: null, maxTokens: null, maxDurationSecs: null };

/** A guard on a clock the test moves by hand, with the events it reports. */
function guarded(budget: Partial<Budget>, options: Partial<LoopGuardOptions> = {}) {
  const clock = { ms: 10_000 };
  const reported: RunEventInput[] = [];
  const interrupt = new AbortController();
  const guard = new LoopGuard({
    budget: { ...NO_CAP, ...budget },
    prices: DEFAULT_PRICES,
    interrupt: interrupt.signal,
    report: (event) => reported.push(event),
    now: () => clock.ms,
    ...options,
  });
  const ofType = <T extends RunEventInput['type']>(type: T) => reported.filter((event): event is Extract<RunEventInput, { type: T }> => event.type === type);
  return { guard, clock, reported, interrupt, ofType };
}

describe('the loop guard: budget, clock and the signal every agent listens to', () => {
  it("joins the user's interrupt and its own stop in one signal, and tells them apart", () => {
    const interrupted = guarded({ maxTokens: 1_000 });
    assert.equal(interrupted.guard.signal.aborted, false);
    interrupted.interrupt.abort();
    assert.equal(interrupted.guard.signal.aborted, true, "the user's interrupt reaches what runs");
    assert.equal(interrupted.guard.stop, null, 'an interrupt is no guard stop');
    assert.deepEqual(interrupted.reported, [], 'and says nothing of a budget');

    const early = new AbortController();
    early.abort();
    assert.equal(guarded({}, { interrupt: early.signal }).guard.signal.aborted, true, 'an interrupt that came before the guard counts');

    const stopped = guarded({ maxTokens: 1_000 });
    stopped.guard.usageReported('1/actor', { inputTokens: 2_000 }, 'gpt-5');
    assert.equal(stopped.guard.signal.aborted, true, "the guard's stop reaches what runs");
    assert.equal(stopped.interrupt.signal.aborted, false, "and is not the user's interrupt");
  });

  it('stops mid-turn when the running totals of a run cross the budget, saying which cap and by how much', () => {
    const tokens = guarded({ maxTokens: 1_000 });
    tokens.guard.usageReported('1/actor', { inputTokens: 400, outputTokens: 100 }, 'gpt-5');
    assert.equal(tokens.guard.stop, null, 'under the cap');
    tokens.guard.usageReported('1/actor', { inputTokens: 900, outputTokens: 200 }, 'gpt-5');
    const message = 'The agents used 1,100 tokens, over the budget of 1,000.';
    assert.deepEqual(tokens.guard.stop, { reason: 'budget_tokens', message });
    assert.equal(tokens.guard.signal.aborted, true, 'before the run ends');
    tokens.guard.usageReported('1/actor', { inputTokens: 5_000 }, 'gpt-5');
    tokens.guard.runFinished('1/actor', { inputTokens: 5_000 }, 'gpt-5');
    assert.deepEqual(tokens.ofType('warning'), [{ type: 'warning', message }], 'the stop is said once, as it was first crossed');

    const cost = guarded({ maxCostUsd: 0.01 }, { earlier: { costUsd: 0.005, tokens: 10, costEstimated: false, durationSecs: 0 } });
    cost.guard.usageReported('3/critic', { inputTokens: 1_000, outputTokens: 100 }, 'a-model-nobody-knows');
    assert.equal(cost.guard.stop?.reason, 'budget_cost');
    assert.match(
      cost.guard.stop?.message ?? '',
      /^The agents' cost reached \$0\.03 \(partly estimated\), over the budget of \$0\.01\. /,
      'counted on from the sessions carried on',
    );
    assert.match(cost.guard.stop?.message ?? '', /no price for "a-model-nobody-knows"/);
  });

  it('does not count the time paused for review against the time budget', () => {
    const { guard, clock, ofType } = guarded({ maxDurationSecs: 60 });
    guard.startClock();
    clock.ms += 30_000;
    guard.pauseClock();
    clock.ms += 3_600_000;
    assert.equal(guard.activeSecs(), 30, 'the pause does not count while it lasts');
    assert.equal(guard.resumeClock(), 3_600);
    guard.startClock();
    assert.equal(guard.stop, null, 'half of the budget is left after an hour of review');
    assert.equal(guard.activeSecs(), 30);
    clock.ms += 10_000;
    assert.equal(guard.spend().elapsed_secs, 40, 'the spend events count the same time');
    assert.equal(guard.runSecs(), 3_640, "the session's own duration counts the pause");
    guard.stopClock();
    assert.deepEqual(ofType('warning'), []);
  });

  it('ends at once a resumed run whose carried-on sessions used the whole time budget, and at the cap while something runs', async () => {
    const spent = guarded({ maxDurationSecs: 60 }, { earlier: { costUsd: null, tokens: 0, costEstimated: false, durationSecs: 60 } });
    spent.guard.startClock();
    assert.deepEqual(spent.guard.stop, {
      reason: 'duration',
      message: 'The loop ran for its whole time budget of 1 min (counting the sessions it carries on).',
    });

    const running = new LoopGuard({
      budget: { ...NO_CAP, maxDurationSecs: 0.05 },
      prices: DEFAULT_PRICES,
      interrupt: new AbortController().signal,
      report: () => {},
    });
    running.startClock();
    await once(running.signal, 'abort');
    assert.deepEqual(running.stop, { reason: 'duration', message: 'The loop ran for its whole time budget of 0.05 s.' });
  });

  it('reports the running totals at most once a second while an agent streams, and always when a run ends', () => {
    const { guard, clock, ofType } = guarded({});
    guard.usageReported('1/actor', { inputTokens: 100 }, 'gpt-5');
    clock.ms += SPEND_EVENT_INTERVAL_MS / 2;
    guard.usageReported('1/actor', { inputTokens: 200 }, 'gpt-5');
    clock.ms += SPEND_EVENT_INTERVAL_MS / 2 - 1;
    guard.usageReported('1/actor', { inputTokens: 300 }, 'gpt-5');
    assert.deepEqual(
      ofType('spend').map((event) => event.total_tokens),
      [100],
      'one report in the first second',
    );
    clock.ms += 1;
    guard.usageReported('1/actor', { inputTokens: 400 }, 'gpt-5');
    guard.runFinished('1/actor', { inputTokens: 500 }, 'gpt-5');
    assert.deepEqual(
      ofType('spend').map((event) => event.total_tokens),
      [100, 400, 500],
      'a second later, and at the end of the run however soon',
    );
    assert.deepEqual(ofType('spend').at(-1), { type: 'spend', total_cost_usd: 0.000625, total_tokens: 500, cost_estimated: true, elapsed_secs: 1 });
  });
});
