import assert from 'node:assert/strict';
import { tellAgentWaiting } from '../../src/extension/runs/waitingNotice.js';
import { FakeEditor, folderAt, runControllerFor } from '../support/fakeEditor.js';
import { stopRunners } from '../support/processes.js';
import { done, scriptedCliSetup } from '../support/scriptedAgent.js';
import { removeTempDirs } from '../support/testEnvironment.js';

/**
 * A loop waiting for an agent's usage limit, as the editor tells it (the limits'
 * `agent_waiting` run event, handed to `tellAgentWaiting`): plain Node, the real
 * runner, the editor's window stubbed.
 */
describe('waiting for a usage limit in the editor: the notification and its Stop (plain Node, the real runner, a stubbed editor)', () => {
  afterEach(stopRunners);
  after(removeTempDirs);

  it('says which agent’s limit and until when; Stop ends the loop there, interrupted', async () => {
    const { repo, env } = scriptedCliSetup({ actor: [[{ hang: true }]], critic: [[done()]] });
    const editor = new FakeEditor();
    const runs = runControllerFor(editor, env, { showAgentText: false });
    const folder = folderAt(repo);
    const actorRunning = new Promise<void>((resolve) =>
      runs.onEvent(({ event }) => {
        if (event.type === 'phase' && event.phase === 'actor') resolve();
      }),
    );
    editor.answer(/waiting for the Claude usage limit/, 'Stop');
    const ended = runs.start(folder, { text: 'write a greeting' });
    await actorRunning;
    const reset = new Date();
    reset.setHours(15, 0, 0, 0);
    tellAgentWaiting(editor.window, folder.name, { agent: 'claude', reason: 'usage_limit', until: reset.toISOString() }, () => runs.interrupt(folder));
    const end = await ended;
    await editor.settled();
    assert.deepEqual(
      editor.shown.filter((entry) => /waiting/.test(entry.text)),
      [{ kind: 'info', text: `Codeloops in ${folder.name} is waiting for the Claude usage limit to reset at 15:00.`, actions: ['Stop'] }],
    );
    assert.ok(end?.kind === 'finished', end?.kind);
    assert.equal(end.summary.status, 'interrupted');
  });
});
