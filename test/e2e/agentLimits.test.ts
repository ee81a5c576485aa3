import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CLAUDE_MAX_RETRIES } from '../../src/agents/adapters/claude.js';
import { GEMINI_FALLBACKS_ALLOWED } from '../../src/agents/adapters/gemini.js';
import { runSummarySchema, type RunEventOf, type RunSummary } from '../../src/sessionFormat/runEvents.js';
import { followRunEvents, runCli, startCli } from '../support/cliProcess.js';
import { GEMINI_MODEL } from '../support/modelApi/geminiApi.js';
import type { ModelRequest, Responder, ScriptedReply } from '../support/modelApi/scripted.js';
import {
  anthropicForbidden,
  anthropicInvalidKey,
  anthropicUsageLimit,
  geminiDailyQuotaExhausted,
  geminiQuotaExhausted,
  openAiUsageLimit,
} from '../support/modelApi/vendorLimits.js';
import { isAgentTurn, REAL_AGENTS, scriptedApis, setUpRealAgents, type RealAgentSetup } from '../support/realAgentLoops.js';
import { sidecarEvents, type RealAgent } from '../support/realAgents.js';
import { isCriticRequest } from '../support/scriptedClaude.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo } from '../support/testEnvironment.js';
import { webhookReceiver } from '../support/webhookReceiver.js';

const TASK = 'Write greeting.txt saying Hello, world';
/** What the loop tells an agent it resumes after a limit (`carryOnPrompt`). */
const CARRY_ON = /Your last turn was cut short by your usage limit, which has now reset\. Carry on/;

/** Which of a role's turns the scripted API refuses, and with what. */
type Limits = Partial<Record<'actor' | 'critic', () => ScriptedReply>>;

/**
 * An actor that writes greeting.txt with its shell tool, a critic that approves it;
 * each role's first turn is answered instead with its vendor's limit, once.
 */
function limitedGreeting(agent: RealAgent, limits: Limits): Responder {
  const refused = new Set<string>();
  return (request: ModelRequest): ScriptedReply => {
    if (!isAgentTurn(request)) return { text: 'Greeting' };
    const role = isCriticRequest(request) ? 'critic' : 'actor';
    const limit = limits[role];
    if (limit && !refused.has(role)) {
      refused.add(role);
      return limit();
    }
    if (role === 'critic') return { text: 'It says it.\n<decision>{"type":"done","summary":"greeting.txt says Hello, world","confidence":0.9}</decision>' };
    if (request.hasToolResult) return { text: 'Wrote greeting.txt.' };
    return { toolCalls: [REAL_AGENTS[agent].shell("printf 'Hello, world\\n' > greeting.txt", 'Write the greeting')] };
  };
}

/** A subscription login for Claude Code: only then does it read the usage limit's headers (an API key sees a plain 429). */
function withClaudeSubscription(setup: RealAgentSetup): Record<string, string> {
  const { ANTHROPIC_API_KEY: _key, ...env } = setup.env;
  return { ...env, CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-fake-token-for-tests' };
}

function waits(setup: RealAgentSetup, sessionId: string): RunEventOf<'agent_waiting'>[] {
  return sidecarEvents(setup.home, sessionId).filter((event): event is RunEventOf<'agent_waiting'> => event.type === 'agent_waiting');
}

const secondsAhead = (secs: number) => new Date(Date.now() + secs * 1000);

/** Runs the loop to its end: it must succeed, greeting.txt written, in one iteration (a wait is no failure). */
async function succeeds(setup: RealAgentSetup, args: string[], env = setup.env): Promise<RunSummary> {
  const run = await runCli([...args, '--json-output'], { cwd: setup.repo, env });
  assert.equal(run.code, 0, run.stderr);
  const outcome = runSummarySchema.parse(JSON.parse(run.stdout));
  assert.equal(outcome.status, 'success');
  assert.equal(fs.readFileSync(path.join(setup.repo, 'greeting.txt'), 'utf8'), 'Hello, world\n');
  assert.equal(assertValidSessionFile(outcome.session_file).iterations.length, 1);
  return outcome;
}

/**
 * Usage limits waited out with the real CLIs: each scripted API answers a turn with
 * its vendor's own limit (body and headers: vendorLimits.ts), the CLI says so in its
 * own words, and the loop waits for the reset, runs the same iteration's agent again
 * in its own session, and the session succeeds. The CLIs' own retries are bounded in
 * their test environments, so each limit reaches the loop at once.
 */
describe('end to end: usage limits waited out with the real CLIs', () => {
  const startApi = scriptedApis();

  it('Claude Code: the actor’s and the critic’s usage limits are waited out until the reset it states; each carries on in its own session', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const resets: Date[] = [];
    const limit = () => {
      const reset = secondsAhead(2);
      resets.push(reset);
      return anthropicUsageLimit(reset);
    };
    const setup = await setUpRealAgents(startApi, repo, [{ agent: 'claude', model: limitedGreeting('claude', { actor: limit, critic: limit }) }]);
    const outcome = await succeeds(setup, ['-p', TASK], withClaudeSubscription(setup));
    const waited = waits(setup, outcome.session_id);
    assert.deepEqual(
      waited.map((wait) => [wait.role, wait.agent, wait.reason, Date.parse(wait.until)]),
      resets.map((reset, index) => [index === 0 ? 'actor' : 'critic', 'Claude Code', 'usage_limit', Math.ceil(reset.getTime() / 1000) * 1000]),
    );
    // Run again in its own session: the model sees the earlier turn and is told to carry on.
    const [api] = setup.apis;
    const carriedOn = api!.requests.filter((request) => isAgentTurn(request) && CARRY_ON.test(request.lastUserText));
    assert.equal(carriedOn.length, 2, 'the actor and the critic were each resumed once');
    assert.ok(carriedOn.some((request) => request.allUserText.includes(TASK) && !isCriticRequest(request)));
  });

  it('Codex: its usage limit ("try again at 6:23 AM") is waited out; it carries on in its own thread', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    // Codex states the reset to the minute: a reset within this minute reads as now.
    const resetInThisMinute = () => openAiUsageLimit(new Date(Math.min(Date.now() + 2000, Math.ceil(Date.now() / 60_000) * 60_000 - 1000)));
    const setup = await setUpRealAgents(startApi, repo, [{ agent: 'codex', model: limitedGreeting('codex', { actor: resetInThisMinute }) }]);
    const outcome = await succeeds(setup, ['-p', TASK, '-a', 'codex']);
    const waited = waits(setup, outcome.session_id);
    assert.deepEqual(
      waited.map((wait) => [wait.role, wait.agent, wait.reason]),
      [['actor', 'Codex', 'usage_limit']],
    );
    const [api] = setup.apis;
    assert.ok(
      api!.requests.some((request) => isAgentTurn(request) && CARRY_ON.test(request.lastUserText) && request.allUserText.includes(TASK)),
      'the actor was resumed in its thread and told to carry on',
    );
  });

  // Gemini CLI keeps no session whose first turn failed: the turn is run again afresh.
  it('Gemini CLI: its exhausted quota (RESOURCE_EXHAUSTED, "Please retry in 2s") is waited out; the turn runs again afresh', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const setup = await setUpRealAgents(startApi, repo, [{ agent: 'gemini', model: limitedGreeting('gemini', { actor: () => geminiQuotaExhausted(2) }) }]);
    const outcome = await succeeds(setup, ['-p', TASK, '-a', 'gemini', '-m', GEMINI_MODEL]);
    assert.deepEqual(
      waits(setup, outcome.session_id).map((wait) => [wait.role, wait.agent, wait.reason]),
      [['actor', 'Gemini CLI', 'usage_limit']],
    );
  });

  it('a reset later than [limits] max_wait_secs allows ends the session failed (usage_limit) without waiting; details.until says when it resets', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n', 'codeloops.toml': '[limits]\nmax_wait_secs = 60\n' } });
    const reset = secondsAhead(3600);
    const setup = await setUpRealAgents(startApi, repo, [{ agent: 'claude', model: limitedGreeting('claude', { actor: () => anthropicUsageLimit(reset) }) }]);
    const run = await runCli(['-p', TASK, '--trust', '--json-output'], { cwd: repo, env: withClaudeSubscription(setup) });
    assert.equal(run.code, 2, run.stderr);
    const outcome = runSummarySchema.parse(JSON.parse(run.stdout));
    assert.equal(outcome.status, 'failed');
    assert.equal(outcome.error_code, 'usage_limit');
    assert.match(outcome.error ?? '', /Claude Code's usage limit \(the actor\) would have the loop wait until .*max_wait_secs/);
    const until = new Date(Math.ceil(reset.getTime() / 1000) * 1000).toISOString();
    assert.deepEqual(outcome.error_details, { agent: 'Claude Code', role: 'actor', reason: 'usage_limit', until });
    const end = assertValidSessionFile(outcome.session_file).end;
    assert.equal(end?.stop_reason, 'usage_limit');
    assert.deepEqual(end?.error_details, outcome.error_details, 'in session_end too, as an extra field');
    assert.deepEqual(waits(setup, outcome.session_id), []);
  });

  it('a reset 60 days ahead, within max_wait_secs, is waited for: the agent is not run again meanwhile, however long the loop runs', async () => {
    // The wait counts against a time budget, which ends the loop while it waits: the runs and waits are then counted.
    const repo = createRepo({ files: { 'README.md': '# demo\n', 'codeloops.toml': '[limits]\nmax_wait_secs = 6000000\ncount_wait = true\n' } });
    const setup = await setUpRealAgents(startApi, repo, [
      { agent: 'claude', model: limitedGreeting('claude', { actor: () => anthropicUsageLimit(secondsAhead(60 * 86_400)) }) },
    ]);
    const run = await runCli(['-p', TASK, '--trust', '--max-duration', '15', '--json-output'], { cwd: repo, env: withClaudeSubscription(setup) });
    assert.equal(run.code, 2, run.stderr);
    const outcome = runSummarySchema.parse(JSON.parse(run.stdout));
    assert.equal(outcome.stop_reason, 'duration', outcome.error ?? '');
    const waited = waits(setup, outcome.session_id);
    assert.equal(waited.length, 1, JSON.stringify(waited));
    assert.ok(Date.parse(waited[0]!.until) > Date.now() + 59 * 86_400_000, waited[0]!.until);
    const [api] = setup.apis;
    assert.equal(api!.requests.filter(isAgentTurn).length, 1, 'the actor ran once');
    assert.doesNotMatch(run.stderr, /TimeoutOverflowWarning/);
  });

  it('Ctrl+C while the loop waits for a usage limit ends the session interrupted at once', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const setup = await setUpRealAgents(startApi, repo, [
      { agent: 'claude', model: limitedGreeting('claude', { actor: () => anthropicUsageLimit(secondsAhead(3600)) }) },
    ]);
    const run = startCli(['-p', TASK, '--events', 'ndjson'], { cwd: repo, env: withClaudeSubscription(setup) });
    const { events, until } = followRunEvents(run);
    await until((seen) => seen.some((event) => event.type === 'agent_waiting'));
    run.child.kill('SIGINT');
    const result = await run.done;
    assert.equal(result.code, 130, result.stderr);
    const finished = events.find((event) => event.type === 'run_finished');
    assert.equal(finished?.type === 'run_finished' ? finished.status : undefined, 'interrupted');
  });

  it('a refused key ends the session failed (agent_auth) after Claude Code’s few quick tries, not its ten over minutes; the hint says to run codeloops doctor', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const refusedAlways = (request: ModelRequest): ScriptedReply => (isAgentTurn(request) ? anthropicInvalidKey() : { text: 'Greeting' });
    const setup = await setUpRealAgents(startApi, repo, [{ agent: 'claude', model: refusedAlways }]);
    // As a user runs it: Claude Code's own retries as it has them, not bounded by the test environment.
    const { CLAUDE_CODE_MAX_RETRIES: _bounded, ...env } = setup.env;
    const run = await runCli(['-p', TASK, '--json-output'], { cwd: repo, env });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /codeloops doctor/);
    assert.equal(runSummarySchema.parse(JSON.parse(run.stdout)).error_code, 'agent_auth');
    const [api] = setup.apis;
    assert.equal(api!.requests.filter(isAgentTurn).length, CLAUDE_MAX_RETRIES + 1, 'sent once and tried again CLAUDE_MAX_RETRIES times, then given up');
  });

  it('a 403 (a key that may not use the API) is a refused login too: agent_auth, not waited out', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const setup = await setUpRealAgents(startApi, repo, [{ agent: 'claude', model: limitedGreeting('claude', { actor: anthropicForbidden }) }]);
    const run = await runCli(['-p', TASK, '--json-output'], { cwd: repo, env: setup.env });
    assert.equal(run.code, 2, run.stderr);
    const outcome = runSummarySchema.parse(JSON.parse(run.stdout));
    assert.equal(outcome.error_code, 'agent_auth', outcome.error ?? '');
    assert.deepEqual(outcome.error_details, { agent: 'Claude Code', role: 'actor' });
    assert.deepEqual(waits(setup, outcome.session_id), []);
  });

  it('max_wait_secs = 0 waits for nothing, and an outage is no usage limit: the run counts as failed and the loop goes on, as with wait = false', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n', 'codeloops.toml': '[limits]\nmax_wait_secs = 0\n' } });
    const greeting = limitedGreeting('claude', {});
    let actorTurns = 0;
    // The actor's first run meets a failing API (every try Claude Code makes itself); then the API is back.
    const outage: Responder = (request) =>
      isAgentTurn(request) && !isCriticRequest(request) && ++actorTurns <= CLAUDE_MAX_RETRIES + 1
        ? { error: { status: 500, message: 'Internal server error' } }
        : greeting(request);
    const setup = await setUpRealAgents(startApi, repo, [{ agent: 'claude', model: outage }]);
    const run = await runCli(['-p', TASK, '--trust', '--json-output'], { cwd: repo, env: setup.env });
    assert.equal(run.code, 0, run.stderr);
    const outcome = runSummarySchema.parse(JSON.parse(run.stdout));
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.iterations, 2, 'the first iteration’s actor failed; the second got through');
    assert.equal(fs.readFileSync(path.join(repo, 'greeting.txt'), 'utf8'), 'Hello, world\n');
    assert.deepEqual(waits(setup, outcome.session_id), []);
  });

  it('Gemini CLI’s zero quota ("limit: 0 … Please retry in 1s") every time: the loop backs off, tells [notify] of one wait, and ends usage_limit within max_wait_secs', async () => {
    // 1 s as stated, then 10 s backed off (11 s of the 12 allowed), then 20 s would pass them.
    const repo = createRepo({ files: { 'README.md': '# demo\n', 'codeloops.toml': '[limits]\nmax_wait_secs = 12\n' } });
    const quota = (request: ModelRequest): ScriptedReply => (isAgentTurn(request) ? geminiQuotaExhausted(1) : { text: 'Greeting' });
    const setup = await setUpRealAgents(startApi, repo, [{ agent: 'gemini', model: quota }]);
    const hook = await webhookReceiver();
    try {
      fs.mkdirSync(path.join(setup.home.configHome, 'codeloops'), { recursive: true });
      fs.writeFileSync(path.join(setup.home.configHome, 'codeloops', 'config.toml'), `[notify]\nwebhook = "${hook.url}"\non = ["waiting"]\n`);
      const run = await runCli(['-p', TASK, '-a', 'gemini', '-m', GEMINI_MODEL, '--trust', '--json-output'], { cwd: repo, env: setup.env });
      assert.equal(run.code, 2, run.stderr);
      const outcome = runSummarySchema.parse(JSON.parse(run.stdout));
      assert.equal(outcome.error_code, 'usage_limit', outcome.error ?? '');
      const waited = waits(setup, outcome.session_id);
      assert.deepEqual(
        waited.map((wait) => wait.tries),
        [1, 2],
      );
      const [first, second] = waited.map((wait) => Date.parse(wait.until) - Date.parse(wait.timestamp));
      assert.ok(first! <= 2_000 && second! >= 9_000, `the stated second, then backed off: ${first} ms, ${second} ms`);
      const [api] = setup.apis;
      assert.equal(api!.requests.filter(isAgentTurn).length, 3);
      assert.deepEqual(
        hook.received.map(({ json }) => json.event),
        ['waiting'],
        'one wait, told once',
      );
    } finally {
      await hook.close();
    }
  });

  it('Gemini CLI’s daily quota ("You have exhausted your daily quota on this model.") is a usage limit until midnight Pacific time: the loop ends usage_limit, the critic never runs', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n', 'codeloops.toml': '[limits]\nmax_wait_secs = 1\n' } });
    const daily = (request: ModelRequest): ScriptedReply => (isAgentTurn(request) ? geminiDailyQuotaExhausted() : { text: 'Greeting' });
    const setup = await setUpRealAgents(startApi, repo, [{ agent: 'gemini', model: daily }]);
    const run = await runCli(['-p', TASK, '-a', 'gemini', '-m', GEMINI_MODEL, '--trust', '--json-output'], { cwd: repo, env: setup.env });
    assert.equal(run.code, 2, run.stderr);
    const outcome = runSummarySchema.parse(JSON.parse(run.stdout));
    assert.equal(outcome.error_code, 'usage_limit', outcome.error ?? '');
    assert.match(outcome.error ?? '', /You have exhausted your daily quota on this model/);
    const until = Date.parse(String(outcome.error_details?.until));
    const pacific = new Intl.DateTimeFormat('en-US', { timeZone: 'America/Los_Angeles', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    assert.equal(pacific.format(until), '00:00', 'a midnight in California');
    assert.ok(until > Date.now() && until <= Date.now() + 25 * 3_600_000, new Date(until).toISOString());
    const [api] = setup.apis;
    assert.equal(api!.requests.filter(isAgentTurn).length, 1, 'the actor once; no critic');
  });

  it('a Gemini critic whose CLI falls back between models without end on a refused quota (plan mode, the auto model) is stopped after a few requests: usage_limit', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n', 'codeloops.toml': '[limits]\nmax_wait_secs = 1\n[critic]\ntimeout_secs = 60\n' } });
    const greeting = limitedGreeting('gemini', {});
    const criticRefused: Responder = (request) => (isAgentTurn(request) && isCriticRequest(request) ? geminiDailyQuotaExhausted() : greeting(request));
    const setup = await setUpRealAgents(startApi, repo, [{ agent: 'gemini', model: criticRefused }]);
    // The actor's model named, the critic's left to Gemini CLI: `auto`.
    const run = await runCli(['-p', TASK, '-a', 'gemini', '--actor-model', GEMINI_MODEL, '--trust', '--json-output'], { cwd: repo, env: setup.env });
    assert.equal(run.code, 2, run.stderr);
    const outcome = runSummarySchema.parse(JSON.parse(run.stdout));
    assert.equal(outcome.error_code, 'usage_limit', outcome.error ?? '');
    assert.equal(outcome.error_details?.role, 'critic');
    assert.match(outcome.error ?? '', /switched models \d+ times in one run/);
    const [api] = setup.apis;
    const criticTurns = api!.requests.filter((request) => isAgentTurn(request) && isCriticRequest(request)).length;
    assert.ok(criticTurns > GEMINI_FALLBACKS_ALLOWED && criticTurns <= 3 * (GEMINI_FALLBACKS_ALLOWED + 1), `${criticTurns} critic requests`);
  });
});
