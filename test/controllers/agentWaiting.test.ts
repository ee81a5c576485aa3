import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { FakeEditor, folderAt, runControllerFor } from '../support/fakeEditor.js';
import { stopRunners } from '../support/processes.js';
import { claudeStream, scriptedClaudeSetup } from '../support/scriptedAgent.js';
import { removeTempDirs } from '../support/testEnvironment.js';

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
    const { repo, env } = scriptedClaudeSetup({ actor: [claudeStream.usageLimit(reset), wroteGreeting], critic });
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

  it('tells of a wait once, however many times the limit refuses the agent in it', async () => {
    // Refused twice: the second time after its stated reset, so the loop backs off and waits again, in the same wait.
    const reset = new Date(Date.now() + 1_000);
    const { repo, env, agent } = scriptedClaudeSetup({ actor: [claudeStream.usageLimit(reset), claudeStream.usageLimit(reset), wroteGreeting], critic });
    const editor = new FakeEditor();
    const runs = runControllerFor(editor, env, { showAgentText: false });
    const end = await runs.start(folderAt(repo), { text: 'write a greeting' });
    await editor.settled();
    assert.ok(end?.kind === 'finished' && end.summary.status === 'success', JSON.stringify(end));
    assert.equal(agent.calls('actor'), 3, 'refused twice, then through');
    assert.equal(editor.shown.filter((entry) => /waiting for/.test(entry.text)).length, 1, JSON.stringify(editor.shown));
  });

  it('Stop ends the waiting loop there, interrupted, without waiting for the reset', async () => {
    const { repo, env } = scriptedClaudeSetup({ actor: [claudeStream.usageLimit(new Date(Date.now() + 3_600_000)), wroteGreeting], critic });
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
