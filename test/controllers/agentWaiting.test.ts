import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { FakeEditor, folderAt, runControllerFor } from '../support/fakeEditor.js';
import { stopRunners } from '../support/processes.js';
import { claudeStream, configureScriptedAgent, SCRIPTED_AGENT, type AgentScript, type ScriptStep } from '../support/scriptedAgent.js';
import { createRepo, isolateHome, removeTempDirs } from '../support/testEnvironment.js';

/** Claude Code's stream-json when the account's usage limit refuses a turn: the rejected rate-limit event with its reset, then the failed result. */
function usageLimitReached(resetsAt: Date): ScriptStep[] {
  const resetsAtSecs = Math.ceil(resetsAt.getTime() / 1000);
  return [
    { print: JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'rejected', resetsAt: resetsAtSecs }, session_id: 'scripted-session' }) },
    {
      print: JSON.stringify({
        type: 'result',
        subtype: 'success',
        is_error: true,
        api_error: 'usage_limit_reached',
        result: "You've hit your 5-hour limit · resets 3pm (UTC)",
        session_id: 'scripted-session',
        total_cost_usd: 0,
        usage: { input_tokens: 0, output_tokens: 0 },
      }),
    },
    { exit: 1 },
  ];
}

/**
 * The scripted agent playing Claude Code (through the `claude` adapter, which reads
 * its usage limit) in both roles, in a global config of an isolated home.
 */
function claudeSetup(script: AgentScript): { repo: string; env: Record<string, string> } {
  const home = isolateHome();
  home.restore(); // only children use it
  const agent = configureScriptedAgent(home.configHome, script);
  const configFile = path.join(home.configHome, 'codeloops', 'config.toml');
  // The scripted agent runs as itself (`#!/usr/bin/env node`), as a `claude` binary would; Claude Code's
  // arguments do not say the role, so the critic's environment does.
  fs.writeFileSync(
    configFile,
    `[defaults]\nagent = "claude"\nmax_iterations = 3\n[defaults.critic]\nenv = { CODELOOPS_ROLE = "critic" }\n\n` +
      `[agents.claude]\npath = ${JSON.stringify(SCRIPTED_AGENT())}\nenv = { SCRIPTED_AGENT_DIR = ${JSON.stringify(agent.dir)} }\n`,
  );
  return { repo: createRepo({ files: { 'README.md': '# project\n' } }), env: home.env };
}

/**
 * A loop waiting for an agent's usage limit, as the editor tells it: the real runner
 * reads Claude Code's own limit from its stream, sends `agent_waiting`, and the editor
 * shows a notification saying whose limit and until when, with a Stop that ends the loop.
 */
describe('waiting for a usage limit in the editor: the notification and its Stop (plain Node, the real runner, a stubbed editor)', () => {
  afterEach(stopRunners);
  after(removeTempDirs);

  const critic = [[claudeStream.result('<decision>{"type":"done","summary":"greeting written","confidence":0.9}</decision>', 0.01, {})]];
  const wroteGreeting = [{ write: { path: 'greeting.txt', content: 'Hello\n' } }, claudeStream.result('Wrote greeting.txt.', 0.01, {})];

  it('says which agent’s limit and until when; the loop carries on by itself once it resets', async () => {
    const reset = new Date(Date.now() + 2_000);
    const { repo, env } = claudeSetup({ actor: [usageLimitReached(reset), wroteGreeting], critic });
    const editor = new FakeEditor();
    const runs = runControllerFor(editor, env, { showAgentText: false });
    const folder = folderAt(repo);
    const end = await runs.start(folder, { text: 'write a greeting' });
    await editor.settled();
    const at = new Date(Math.ceil(reset.getTime() / 1000) * 1000).toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    assert.deepEqual(
      editor.shown.filter((entry) => /waiting for/.test(entry.text)),
      [{ kind: 'info', text: `Codeloops in ${folder.name} is waiting for the Claude Code usage limit to reset at ${at}.`, actions: ['Stop'] }],
    );
    assert.ok(end?.kind === 'finished', JSON.stringify(end));
    assert.equal(end.summary.status, 'success', JSON.stringify(end.summary));
    assert.equal(fs.readFileSync(path.join(repo, 'greeting.txt'), 'utf8'), 'Hello\n');
  });

  it('Stop ends the waiting loop there, interrupted, without waiting for the reset', async () => {
    const { repo, env } = claudeSetup({ actor: [usageLimitReached(new Date(Date.now() + 3_600_000)), wroteGreeting], critic });
    const editor = new FakeEditor();
    const runs = runControllerFor(editor, env, { showAgentText: false });
    editor.answer(/waiting for the Claude Code usage limit/, 'Stop');
    const end = await runs.start(folderAt(repo), { text: 'write a greeting' });
    await editor.settled();
    assert.ok(end?.kind === 'finished', JSON.stringify(end));
    assert.equal(end.summary.status, 'interrupted');
    assert.equal(fs.existsSync(path.join(repo, 'greeting.txt')), false);
  });
});
