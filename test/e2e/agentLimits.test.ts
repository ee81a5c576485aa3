import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runSummarySchema, type RunEventOf, type RunSummary } from '../../src/sessionFormat/runEvents.js';
import { followRunEvents, runCli, startCli } from '../support/cliProcess.js';
import { GEMINI_MODEL } from '../support/modelApi/geminiApi.js';
import type { ModelRequest, Responder, ScriptedReply } from '../support/modelApi/scripted.js';
import { anthropicInvalidKey, anthropicUsageLimit, geminiQuotaExhausted, openAiUsageLimit } from '../support/modelApi/vendorLimits.js';
import { isAgentTurn, REAL_AGENTS, scriptedApis, setUpRealAgents, type RealAgentSetup } from '../support/realAgentLoops.js';
import { sidecarEvents, type RealAgent } from '../support/realAgents.js';
import { isCriticRequest } from '../support/scriptedClaude.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo } from '../support/testEnvironment.js';

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

  it('a reset later than [limits] max_wait_secs allows ends the session failed (usage_limit) without waiting', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n', 'codeloops.toml': '[limits]\nmax_wait_secs = 60\n' } });
    const setup = await setUpRealAgents(startApi, repo, [
      { agent: 'claude', model: limitedGreeting('claude', { actor: () => anthropicUsageLimit(secondsAhead(3600)) }) },
    ]);
    const run = await runCli(['-p', TASK, '--trust', '--json-output'], { cwd: repo, env: withClaudeSubscription(setup) });
    assert.equal(run.code, 2, run.stderr);
    const outcome = runSummarySchema.parse(JSON.parse(run.stdout));
    assert.equal(outcome.status, 'failed');
    assert.equal(outcome.error_code, 'usage_limit');
    assert.match(outcome.error ?? '', /Claude Code's usage limit \(the actor\) would have the loop wait until .*max_wait_secs/);
    const end = assertValidSessionFile(outcome.session_file).end;
    assert.equal(end?.stop_reason, 'usage_limit');
    assert.deepEqual(waits(setup, outcome.session_id), []);
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

  it('a refused key ends the session failed (agent_auth) at once, and the hint says to run codeloops doctor', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const setup = await setUpRealAgents(startApi, repo, [{ agent: 'claude', model: limitedGreeting('claude', { actor: anthropicInvalidKey }) }]);
    const run = await runCli(['-p', TASK], { cwd: repo, env: setup.env });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /codeloops doctor/);
    const [api] = setup.apis;
    assert.equal(api!.requests.filter(isAgentTurn).length, 1, 'tried once, not waited out');
  });
});
