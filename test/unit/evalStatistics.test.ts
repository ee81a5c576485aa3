import assert from 'node:assert/strict';
import { newcombeInterval, wilsonInterval, type Interval } from '../../src/eval/evalStatistics.js';
import { evalOutcomeOf } from '../../src/sessionFormat/evalRecords.js';

/** Both ends to the 4 decimals the papers print. */
function assertInterval(actual: Interval | null, expected: Interval): void {
  assert.ok(actual, 'an interval');
  assert.deepEqual(
    actual.map((end) => end.toFixed(4)),
    expected.map((end) => end.toFixed(4)),
  );
}

describe('eval statistics: Wilson and Newcombe intervals against the published worked examples', () => {
  // Newcombe RG (1998), "Two-sided confidence intervals for the single proportion: comparison of seven methods", Stat Med 17:857–872, Table I, method 3 (score, no continuity correction).
  for (const [successes, trials, low, high] of [
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ] as const) {
    it(`Wilson for ${successes}/${trials} is [${low}, ${high}]`, () => assertInterval(wilsonInterval(successes, trials), [low, high]));
  }

  // Newcombe RG (1998), "Interval estimation for the difference between independent proportions: comparison of eleven methods", Stat Med 17:873–890, Table II, method 10 (score, no continuity correction).
  for (const [x1, n1, x2, n2, low, high] of [
    [56, 70, 48, 80, 0.0524, 0.3339],
    [9, 10, 3, 10, 0.1705, 0.809],
    [5, 56, 0, 29, -0.0381, 0.1926],
    [0, 10, 0, 20, -0.1611, 0.2775],
    [0, 10, 0, 10, -0.2775, 0.2775],
    [10, 10, 0, 20, 0.6791, 1],
    [10, 10, 0, 10, 0.6075, 1],
  ] as const) {
    it(`Newcombe for ${x1}/${n1} − ${x2}/${n2} is [${low}, ${high}]`, () => assertInterval(newcombeInterval(x1, n1, x2, n2), [low, high]));
  }

  it('no runs, no interval; an interval never leaves [0, 1] (a difference [-1, 1])', () => {
    assert.equal(wilsonInterval(0, 0), null);
    assert.equal(newcombeInterval(1, 2, 0, 0), null);
    const all = wilsonInterval(4, 4)!;
    assert.equal(all[1], 1);
    const none = newcombeInterval(0, 3, 3, 3)!;
    assert.ok(none[0] >= -1 && none[1] <= 0);
  });

  it("a run's outcome: the loop's success against its task's acceptance", () => {
    const table = [true, false].flatMap((succeeded) => [true, false].map((passed) => [succeeded, passed, evalOutcomeOf(succeeded, passed)]));
    assert.deepEqual(table, [
      [true, true, 'accepted'],
      [true, false, 'false_done'],
      [false, true, 'false_continue'],
      [false, false, 'failed'],
    ]);
  });
});
