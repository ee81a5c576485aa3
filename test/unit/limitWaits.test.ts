import assert from 'node:assert/strict';
import type { AgentLimit, AgentTurn } from '../../src/agents/agentLimits.js';
import type { AgentRunResult } from '../../src/agents/runAgent.js';
import { DEFAULT_LIMITS, type LimitSettings } from '../../src/config/runSettings.js';
import { LimitWaits, OUTAGE_RETRIES, WAIT_MAX_TRIES, type WaitingAgent } from '../../src/loop/outlastLimits.js';
import { MAX_TIMER_MS, setLongTimeout, type Timers } from '../../src/process/longTimer.js';
import { isCodeloopsError, type CodeloopsError } from '../../src/sessionFormat/failures.js';

const CLAUDE: WaitingAgent = { iteration: 1, agent: 'Claude Code', role: 'actor', canResume: true };

function run(limit: AgentLimit | null, sessionId: string | null = 'session-1'): AgentRunResult {
  return {
    transcript: '',
    finalText: null,
    stderr: '',
    started: true,
    exitCode: limit ? 1 : 0,
    signal: null,
    durationSecs: 0,
    succeeded: limit === null,
    failureReason: limit?.message ?? null,
    timedOut: false,
    interrupted: false,
    agentSessionId: sessionId,
    usage: { costUsd: 0.25 },
    model: null,
    toolCalls: 0,
    drift: { unknownEvents: 0, unknownFields: 0, examples: [] },
    limit,
  };
}

/** A wait unit over scripted runs: each turn it is given, and what the clock and the record were told. */
function waitsFor(results: (AgentRunResult | (() => AgentRunResult))[], settings: Partial<LimitSettings> = {}, controller = new AbortController()) {
  const turns: AgentTurn[] = [];
  const told: string[] = [];
  const waits = new LimitWaits(
    { ...DEFAULT_LIMITS, ...settings },
    {
      signal: controller.signal,
      onWaiting: (who, reason, until) => told.push(`${who.role} ${reason} ${until.getTime() - Date.now() > 0 ? 'ahead' : 'now'}`),
      pauseClock: () => told.push('clock paused'),
      resumeClock: () => told.push('clock resumed'),
    },
  );
  const outlast = () =>
    waits.outlast(CLAUDE, { prompt: 'the task', resumeSessionId: null }, async (turn) => {
      turns.push(turn);
      const next = results.shift()!;
      return typeof next === 'function' ? next() : next;
    });
  return { outlast, turns, told };
}

const soon = () => Date.now() + 20;

describe('the loop outlasts an agent’s limits (outlastLimits)', () => {
  it('waits until the reset, the clock paused, then resumes the agent’s own session told to carry on, its cost so far counted', async () => {
    const { outlast, turns, told } = waitsFor([run({ kind: 'usage_limit', until: soon(), message: 'limit' }), run(null)]);
    const result = await outlast();
    assert.equal(result.succeeded, true);
    assert.deepEqual(told, ['actor usage_limit ahead', 'clock paused', 'clock resumed']);
    assert.equal(turns[1]!.resumeSessionId, 'session-1');
    assert.match(turns[1]!.prompt, /^Your last turn was cut short by your usage limit, which has now reset\. Carry on/);
    assert.equal(turns[1]!.costAlreadyCounted, 0.25);
  });

  it('with count_wait the clock runs on; an agent that cannot resume gets the same turn again', async () => {
    const { outlast, turns, told } = waitsFor([run({ kind: 'rate_limited', until: soon(), message: '429' }, null), run(null)], { countWait: true });
    await outlast();
    assert.deepEqual(told, ['actor rate_limited ahead']);
    assert.deepEqual(turns[1], { prompt: 'the task', resumeSessionId: null });
  });

  it('a session the agent did not keep (its resumed run opens none): the turn again afresh', async () => {
    const { outlast, turns } = waitsFor([run({ kind: 'usage_limit', until: soon(), message: 'limit' }), { ...run(null, null), succeeded: false }, run(null)]);
    const result = await outlast();
    assert.equal(result.succeeded, true);
    assert.deepEqual(
      turns.map((turn) => turn.resumeSessionId),
      [null, 'session-1', null],
    );
    assert.equal(turns[2]!.prompt, 'the task');
  });

  it('a wait past max_wait_secs ends it: usage_limit, without waiting', async () => {
    const { outlast, told } = waitsFor([run({ kind: 'usage_limit', until: Date.now() + 3_600_000, message: 'limit' })], { maxWaitSecs: 60 });
    await assert.rejects(outlast(), (error) => isCodeloopsError(error) && error.code === 'usage_limit' && /max_wait_secs/.test(error.message));
    assert.deepEqual(told, []);
  });

  it('wait = false: a usage limit ends it at once; a rate limit is a failure like any other', async () => {
    await assert.rejects(
      waitsFor([run({ kind: 'usage_limit', until: soon(), message: 'limit' })], { wait: false }).outlast(),
      (error) => isCodeloopsError(error) && error.code === 'usage_limit',
    );
    const failed = await waitsFor([run({ kind: 'rate_limited', until: soon(), message: '429' })], { wait: false }).outlast();
    assert.equal(failed.succeeded, false);
  });

  it('a refused login ends it at once: agent_auth', async () => {
    await assert.rejects(
      waitsFor([run({ kind: 'auth', until: null, message: 'Invalid API key' })]).outlast(),
      (error) => isCodeloopsError(error) && error.code === 'agent_auth' && /Claude Code \(the actor\) could not log in: Invalid API key/.test(error.message),
    );
  });

  it('an interrupt during a wait ends it at once, as an interrupted run', async () => {
    const controller = new AbortController();
    const { outlast, told } = waitsFor([run({ kind: 'usage_limit', until: Date.now() + 3_600_000, message: 'limit' })], {}, controller);
    const waiting = outlast();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(told, ['actor usage_limit ahead', 'clock paused']);
    controller.abort();
    const result = await waiting;
    assert.equal(result.interrupted, true);
    assert.deepEqual(told, ['actor usage_limit ahead', 'clock paused', 'clock resumed']);
  });
});

/**
 * A clock the test moves: each timer set on it fires when the test moves the clock to
 * it (`settle`), so that waits of minutes or months take none.
 */
class TestClock implements Timers {
  ms = Date.UTC(2026, 10, 26, 5, 21, 46);
  /** Every delay a timer was set for, in order. */
  readonly delays: number[] = [];
  private pending: { at: number; fire: () => void; id: number }[] = [];
  private ids = 0;
  now = (): number => this.ms;
  setTimeout = (fire: () => void, ms: number): unknown => {
    this.delays.push(ms);
    const id = ++this.ids;
    this.pending.push({ at: this.ms + ms, fire, id });
    return id;
  };
  clearTimeout = (id: unknown): void => {
    this.pending = this.pending.filter((timer) => timer.id !== id);
  };

  /** Runs `work` to its end, moving the clock to each timer in turn whenever nothing else is left to do. */
  async settle<T>(work: Promise<T>): Promise<T> {
    let finished = false;
    work.then(
      () => (finished = true),
      () => (finished = true),
    );
    for (let steps = 0; !finished; steps++) {
      assert.ok(steps < 10_000, 'the wait never ends');
      await new Promise((resolve) => setImmediate(resolve));
      const next = this.pending.sort((a, b) => a.at - b.at).shift();
      if (!next || finished) continue;
      this.ms = Math.max(this.ms, next.at);
      next.fire();
    }
    return work;
  }
}

const DAY_MS = 86_400_000;

/** A wait unit on a test clock over scripted runs (each made as it runs, from the clock's time then), with what it was told. */
function waitsOnClock(results: ((now: number) => AgentRunResult)[], settings: Partial<LimitSettings> = {}) {
  const clock = new TestClock();
  const turns: AgentTurn[] = [];
  const waited: { tries: number; reason: string; until: number; at: number }[] = [];
  const waits = new LimitWaits(
    { ...DEFAULT_LIMITS, ...settings },
    {
      signal: new AbortController().signal,
      onWaiting: (_who, reason, until, tries) => waited.push({ tries, reason, until: until.getTime(), at: clock.ms }),
      pauseClock: () => {},
      resumeClock: () => {},
      timers: clock,
    },
  );
  const outlast = () =>
    clock.settle(
      waits.outlast(CLAUDE, { prompt: 'the task', resumeSessionId: null }, async (turn) => {
        turns.push(turn);
        const next = results.length > 1 ? results.shift()! : results[0]!;
        return next(clock.ms);
      }),
    );
  return { outlast, clock, turns, waited };
}

const limited =
  (kind: AgentLimit['kind'], until: (now: number) => number | null, message = `${kind} said so`) =>
  (now: number) =>
    run({ kind, until: until(now), message });
const succeeding = () => run(null);
const usageLimitError = (pattern: RegExp) => (error: unknown) =>
  isCodeloopsError(error) && error.code === 'usage_limit' && pattern.test(error.message) && Number.isFinite(Date.parse(String(error.details.until)));

describe('waits that stay bounded: a test clock, no real waiting', () => {
  it('a reset 60 days ahead, within max_wait_secs: one wait, in steps a timer can hold, and the agent run again only at the reset', async () => {
    const { outlast, clock, turns, waited } = waitsOnClock([limited('usage_limit', (now) => now + 60 * DAY_MS), succeeding], {
      maxWaitSecs: 70 * 86_400,
    });
    const started = clock.ms;
    const result = await outlast();
    assert.equal(result.succeeded, true);
    assert.equal(turns.length, 2, 'run once, then once more after the reset');
    assert.equal(waited.length, 1);
    assert.equal(waited[0]!.until, started + 60 * DAY_MS);
    assert.ok(clock.ms >= started + 60 * DAY_MS, 'not run again before the reset');
    assert.ok(
      clock.delays.every((delay) => delay <= MAX_TIMER_MS),
      `every timer within setTimeout's limit: ${clock.delays.join(', ')}`,
    );
    assert.ok(clock.delays.length >= 3, 'waited out in steps');
  });

  it('a quota that answers "retry in 3.5s" every time (Gemini CLI’s limit: 0): backs off, says one wait, and gives up after WAIT_MAX_TRIES runs', async () => {
    const { outlast, turns, waited } = waitsOnClock([limited('usage_limit', (now) => now + 3500, 'limit: 0 … Please retry in 3.5s.')]);
    await assert.rejects(outlast(), usageLimitError(new RegExp(`refused it ${WAIT_MAX_TRIES} times in a row.*Please retry in 3\\.5s`)));
    assert.equal(turns.length, WAIT_MAX_TRIES);
    assert.deepEqual(
      waited.map((wait) => wait.tries),
      Array.from({ length: WAIT_MAX_TRIES - 1 }, (_, index) => index + 1),
      'one wait, each refusal counted in it',
    );
    const gaps = waited.map((wait) => wait.until - wait.at);
    assert.equal(gaps[0], 3500, 'the stated delay, the first time');
    for (let index = 1; index < gaps.length; index++) assert.ok(gaps[index]! > gaps[index - 1]!, `backs off: ${gaps.join(', ')}`);
  });

  it('several waits that add up past max_wait_secs end it (usage_limit), though each alone would fit', async () => {
    // 3 s as stated, then refused again: at least 10 s. 13 s in all, over 12; each under it.
    const { outlast, turns, waited } = waitsOnClock([limited('usage_limit', (now) => now + 3000), limited('usage_limit', (now) => now + 3000), succeeding], {
      maxWaitSecs: 12,
    });
    await assert.rejects(outlast(), usageLimitError(/more than the 12 s the limits allow in all/));
    assert.equal(waited.length, 1);
    assert.equal(turns.length, 2);
  });

  it('two limits in a row: the third run counts the cost of both before it, in the agent’s own session', async () => {
    const { outlast, turns } = waitsOnClock([limited('usage_limit', (now) => now + 1000), limited('rate_limited', (now) => now + 1000), succeeding]);
    const result = await outlast();
    assert.equal(result.succeeded, true);
    assert.deepEqual(
      turns.map((turn) => [turn.resumeSessionId, turn.costAlreadyCounted]),
      [
        [null, undefined],
        ['session-1', 0.25],
        ['session-1', 0.5],
      ],
    );
  });

  it('max_wait_secs = 0 waits for nothing, as wait = false: a usage limit ends it (usage_limit), an outage or a rate limit is a failed run like any other', async () => {
    for (const settings of [{ maxWaitSecs: 0 }, { wait: false }]) {
      for (const kind of ['outage', 'rate_limited', 'overloaded'] as const) {
        const { outlast, turns, waited } = waitsOnClock([limited(kind, () => null, 'API Error: Connection error.'), succeeding], settings);
        const result = await outlast();
        assert.equal(result.limit?.kind, kind, JSON.stringify(settings));
        assert.equal(result.succeeded, false);
        assert.equal(turns.length, 1);
        assert.deepEqual(waited, []);
      }
      await assert.rejects(waitsOnClock([limited('usage_limit', (now) => now + 1000)], settings).outlast(), usageLimitError(/waiting for limits is off/));
    }
  });

  it('an outage is tried again a few times, backing off, then the run counts as failed', async () => {
    const { outlast, turns, waited } = waitsOnClock([limited('outage', () => null, 'ECONNREFUSED')]);
    const result = await outlast();
    assert.equal(result.limit?.kind, 'outage');
    assert.equal(turns.length, OUTAGE_RETRIES + 1);
    assert.deepEqual(
      waited.map((wait) => (wait.until - wait.at) / 1000),
      [30, 60, 120, 240],
    );
  });

  it('an outage longer than max_wait_secs allows keeps its own outcome: a failed run, not usage_limit', async () => {
    const { outlast, turns } = waitsOnClock([limited('outage', () => null)], { maxWaitSecs: 45 });
    const result = await outlast();
    assert.equal(result.limit?.kind, 'outage');
    // 30 s, then 60 s would pass 45.
    assert.equal(turns.length, 2);
  });

  describe('as a hostile CLI or API would answer', () => {
    it('a reset that is no time at all, or ages away: never an invalid date, never past a year, never in the past', async () => {
      for (const garbage of [Number.NaN, Infinity, -Infinity, 1e300, -1e300, 8.64e15 + 1, -5]) {
        const { outlast, waited } = waitsOnClock([limited('usage_limit', () => garbage), succeeding], { maxWaitSecs: 400 * 86_400 });
        const result = await outlast();
        assert.equal(result.succeeded, true, String(garbage));
        assert.equal(waited.length, 1);
        assert.ok(waited[0]!.until > waited[0]!.at && waited[0]!.until <= waited[0]!.at + 366 * DAY_MS, `${garbage}: ${waited[0]!.until - waited[0]!.at}`);
      }
      // Past max_wait_secs: the error's until is a real date.
      await assert.rejects(waitsOnClock([limited('usage_limit', () => 1e300)]).outlast(), (error: CodeloopsError) => {
        assert.match(String(error.details.until), /^\d{4}-\d\d-\d\dT/);
        return error.code === 'usage_limit';
      });
    });

    it('a reset in the past: looked at again soon, then less often, never at once', async () => {
      const { outlast, waited } = waitsOnClock([limited('usage_limit', (now) => now - DAY_MS), limited('usage_limit', (now) => now - DAY_MS), succeeding]);
      await outlast();
      assert.deepEqual(
        waited.map((wait) => wait.until - wait.at),
        [5_000, 10_000],
      );
    });

    it('an API that alternates the kind of limit gains nothing: the tries of one wait count them all', async () => {
      const kinds = ['rate_limited', 'usage_limit', 'overloaded'] as const;
      let index = 0;
      const alternating = (now: number) => run({ kind: kinds[index++ % kinds.length]!, until: now + 1000, message: 'refused' });
      const { outlast, turns, waited } = waitsOnClock([alternating], { maxWaitSecs: 30 * 86_400 });
      await assert.rejects(outlast(), usageLimitError(/refused it 10 times/));
      assert.equal(turns.length, WAIT_MAX_TRIES);
      const gaps = waited.map((wait) => wait.until - wait.at);
      for (let at = 2; at < gaps.length; at++) assert.ok(gaps[at]! >= gaps[at - 1]! || gaps[at]! >= 60_000, `backs off: ${gaps.join(', ')}`);

      // Outages among them: still at most OUTAGE_RETRIES tries again, then a failed run.
      let flip = 0;
      const withOutages = (now: number) => run({ kind: flip++ % 2 === 0 ? 'outage' : 'rate_limited', until: now + 1000, message: 'down' });
      const outages = waitsOnClock([withOutages], { maxWaitSecs: 30 * 86_400 });
      const result = await outages.outlast();
      assert.equal(result.succeeded, false);
      assert.equal(outages.turns.length, OUTAGE_RETRIES + 1);
    });
  });
});

describe('setLongTimeout: a delay past what setTimeout holds', () => {
  it('fires once the whole delay has passed, in steps each within the limit; cancelled, never', async () => {
    const clock = new TestClock();
    const started = clock.ms;
    let firedAt: number | null = null;
    await clock.settle(new Promise<void>((resolve) => setLongTimeout(() => resolve(void (firedAt = clock.ms)), 60 * DAY_MS, { timers: clock })));
    assert.equal(firedAt, started + 60 * DAY_MS);
    assert.ok(clock.delays.every((delay) => delay <= MAX_TIMER_MS));

    let fired = false;
    const cancel = setLongTimeout(() => (fired = true), 60 * DAY_MS, { timers: clock });
    cancel();
    assert.equal(clock.delays.length, 4, 'no step after the cancel');
    assert.equal(fired, false);
  });

  it('a delay that is not a number, or below 0, fires on the next turn', async () => {
    for (const delay of [Number.NaN, -1, -Infinity]) {
      const clock = new TestClock();
      const started = clock.ms;
      await clock.settle(new Promise<void>((resolve) => setLongTimeout(resolve, delay, { timers: clock })));
      assert.equal(clock.ms, started, String(delay));
      assert.deepEqual(clock.delays, [0]);
    }
  });
});
