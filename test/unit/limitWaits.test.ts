import assert from 'node:assert/strict';
import type { AgentLimit, AgentTurn } from '../../src/agents/agentLimits.js';
import type { AgentRunResult } from '../../src/agents/runAgent.js';
import { DEFAULT_LIMITS, type LimitSettings } from '../../src/config/runSettings.js';
import { LimitWaits, OUTAGE_RETRIES, type WaitingAgent } from '../../src/loop/outlastLimits.js';
import { isCodeloopsError } from '../../src/sessionFormat/failures.js';

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

  it('an outage is tried again a few times, then the run counts as failed', async () => {
    const outage = () => run({ kind: 'outage', until: soon(), message: 'ECONNREFUSED' });
    // Each made as it runs: its retry time just ahead.
    const { outlast, turns } = waitsFor(Array.from({ length: OUTAGE_RETRIES + 2 }, () => outage));
    const result = await outlast();
    assert.equal(result.limit?.kind, 'outage');
    assert.equal(turns.length, OUTAGE_RETRIES + 1);
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
