import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { resumeSession, rollBackIteration, undoLastRollback } from '../../src/extension/timeTravel/timeTravelCommands.js';
import { openRepository } from '../../src/git/repository.js';
import { listSessionRefs } from '../../src/git/snapshots.js';
import { sessionsDir, sidecarDirOf } from '../../src/sessionFormat/sessionFiles.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { FakeEditor, folderAt, runControllerFor, sessionCommandsFor, timeTravelFor } from '../support/fakeEditor.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { carryOnNaming, configureScriptedAgent, done, type AgentScript } from '../support/scriptedAgent.js';
import { createRepo, writeFile } from '../support/testEnvironment.js';
import { runnerSuiteHome } from '../support/processes.js';

/**
 * Rollback, undo, resume and delete as the editor offers them, in plain Node: the
 * real engine and runner on a real repository, the editor's window stubbed.
 */
describe('time travel and session commands (plain Node, real repositories, a stubbed editor)', () => {
  const suiteHome = runnerSuiteHome();

  function setup(script: AgentScript) {
    configureScriptedAgent(suiteHome().configHome, script);
    const repo = createRepo({ files: { 'app.js': 'v0\n' } });
    const editor = new FakeEditor();
    const folder = folderAt(repo);
    const store = new SessionStore(sessionsDir());
    const changed: string[] = [];
    const runs = runControllerFor(editor, suiteHome().env, { showAgentText: false });
    const deps = timeTravelFor(editor, runs, {
      store,
      folderOf: (filePath) => (filePath === repo ? folder : undefined),
      changed: (id) => changed.push(id),
    });
    return { repo, editor, folder, store, runs, deps, changed };
  }

  const TWO_EDITS: AgentScript = {
    actor: [[{ write: { path: 'app.js', content: 'v1\n' } }], [{ write: { path: 'app.js', content: 'v2\n' } }]],
    critic: [[carryOnNaming('again')], [done()]],
  };

  it('rolls back after a modal that lists the files, offers the undo at once, and the undo puts them forward', async () => {
    const { repo, editor, folder, runs, deps, changed } = setup(TWO_EDITS);
    const end = await runs.start(folder, { text: 'edit app' });
    assert.ok(end?.kind === 'finished');
    const id = end.summary.session_id;
    editor.answer(/^Roll back to before iteration 2\?/, 'Roll Back').answer(/rolled back to before iteration 2/, 'Undo Rollback');
    const outcome = await rollBackIteration(deps, id, 2);
    await editor.settled();
    assert.equal(outcome?.result, 'rolled_back');
    assert.equal(fs.readFileSync(path.join(repo, 'app.js'), 'utf8'), 'v1\n');
    const question = editor.shown.find((entry) => entry.kind === 'confirm')!;
    assert.match(question.detail!, /^Restore \(1\):\n {2}app\.js/);
    assert.doesNotMatch(question.detail!, /--/, 'no command-line flags in the editor');
    assert.deepEqual(editor.executed.at(-1), { command: 'codeloops.undoRollback', args: [id] });
    assert.deepEqual(changed, [id]);

    editor.answer(/^Undo the last rollback\?/, 'Undo Rollback');
    const undone = await undoLastRollback(deps, id);
    assert.equal(undone?.result, 'undone');
    assert.equal(fs.readFileSync(path.join(repo, 'app.js'), 'utf8'), 'v2\n');
  });

  it('says plainly when the user changed a file since, overwrites only on their word, and changes nothing when they say no', async () => {
    const { repo, editor, folder, runs, deps } = setup(TWO_EDITS);
    const end = await runs.start(folder, { text: 'edit app' });
    assert.ok(end?.kind === 'finished');
    writeFile(repo, 'app.js', 'mine\n');
    const declined = await rollBackIteration(deps, end.summary.session_id, 2);
    assert.equal(declined, undefined);
    assert.equal(fs.readFileSync(path.join(repo, 'app.js'), 'utf8'), 'mine\n', 'no answer: nothing changed');
    const conflict = editor.shown.find((entry) => entry.kind === 'confirm')!;
    assert.equal(conflict.text, 'You changed files since the loop last touched them.');
    assert.match(conflict.detail!, /Your changes to these would be overwritten \(1\):\n {2}app\.js/);

    editor.answer(/^You changed files/, 'Overwrite My Changes').answer(/^Roll back to before iteration 2\?/, 'Roll Back');
    const forced = await rollBackIteration(deps, end.summary.session_id, 2);
    assert.equal(forced?.result, 'rolled_back');
    assert.deepEqual(forced?.overwritten, ['app.js']);
    assert.equal(fs.readFileSync(path.join(repo, 'app.js'), 'utf8'), 'v1\n');
  });

  it('resumes an interrupted session; when the files changed since, asks by the refusal’s code and carries on only if told to', async () => {
    const { repo, editor, folder, runs, deps, store } = setup({
      actor: [[{ write: { path: 'app.js', content: 'v1\n' } }, { print: 'slow' }, { sleep: 60_000 }], [{ write: { path: 'app.js', content: 'v2\n' } }]],
      critic: [[done('carried on')]],
    });
    const first = runs.start(folder, { text: 'slow edit' });
    await new Promise<void>((resolve) => runs.onEvent(({ event }) => event.type === 'agent_event' && resolve()));
    await runs.interrupt(folder);
    const interrupted = await first;
    assert.ok(interrupted?.kind === 'finished' && interrupted.summary.status === 'interrupted');
    writeFile(repo, 'app.js', 'edited by hand\n');
    const before = (await store.list()).length;

    await resumeSession(deps, interrupted.summary.session_id);
    await editor.settled();
    const question = editor.shown.find((entry) => entry.kind === 'confirm')!;
    assert.equal(question.text, 'Resume with the files as they are now?');
    assert.match(question.detail!, /The files differ from how the loop left them .*\n {2}modified app\.js/s);
    assert.doesNotMatch(question.detail!, /--force/, 'the editor’s words, not the command line’s');
    assert.deepEqual(editor.texts('error'), [], 'the refusal is asked about, not reported as an error');
    assert.equal((await store.list()).length, before, 'declined: nothing ran');

    editor.answer(/^Resume with the files/, 'Resume Anyway');
    await resumeSession(deps, interrupted.summary.session_id);
    await editor.settled();
    const sessions = await store.list();
    assert.equal(sessions.length, before + 1);
    const resumed = await store.load(sessions[0]!.id);
    assert.equal(resumed.start.resumed_from, interrupted.summary.session_id);
    assert.equal(resumed.end?.outcome, 'success');
    assert.equal(fs.readFileSync(path.join(repo, 'app.js'), 'utf8'), 'v2\n');
  });

  it('copies a session’s prompt from its start line, reading nothing after it', async () => {
    const editor = new FakeEditor();
    const warnings: string[] = [];
    const store = new SessionStore(sessionsDir(), (message) => warnings.push(message));
    const id = writeSession(
      sessionsDir(),
      [startLine({ prompt: 'Copy me 📋' }), { raw: 'a bad line further on\n' }, iterationLine(1), endLine()],
      'copy-prompt',
    );
    await sessionCommandsFor(editor, store).copyPrompt(id);
    assert.deepEqual(editor.clipboard, ['Copy me 📋']);
    assert.deepEqual(editor.texts('status'), ['Codeloops: prompt copied']);
    assert.deepEqual(warnings, [], 'the bad line after the start is never read');
  });

  it('deletes a session after asking: its file, its record and its snapshots; never a running one', async () => {
    const { editor, folder, runs, store, repo } = setup({ actor: [[{ write: { path: 'b.txt', content: 'b\n' } }]], critic: [[done()]] });
    const end = await runs.start(folder, { text: 'make b' });
    assert.ok(end?.kind === 'finished');
    const id = end.summary.session_id;
    const gone: string[] = [];
    const commands = sessionCommandsFor(editor, store, (sessionId) => gone.push(sessionId));
    assert.equal(await commands.delete(id), false, 'not confirmed');
    assert.ok(fs.existsSync(store.filePathOf(id)));

    editor.answer(/^Delete the session "make b"\?/, 'Delete');
    assert.equal(await commands.delete(id), true);
    assert.ok(!fs.existsSync(store.filePathOf(id)));
    assert.ok(!fs.existsSync(sidecarDirOf(id)));
    assert.equal((await listSessionRefs(await openRepository(repo), id)).size, 0, 'its snapshots are gone');
    assert.equal(fs.readFileSync(path.join(repo, 'b.txt'), 'utf8'), 'b\n', 'the user’s files stay');
    assert.deepEqual(gone, [id]);

    const slow = setup({ actor: [[{ print: 'slow' }, { sleep: 60_000 }]], critic: [[done()]] });
    const running = slow.runs.start(slow.folder, { text: 'slow' });
    const sessionId = await new Promise<string>((resolve) => slow.runs.onEvent(({ event }) => event.type === 'run_started' && resolve(event.session_id)));
    const refusing = sessionCommandsFor(slow.editor, slow.store);
    assert.equal(await refusing.delete(sessionId), false);
    assert.match(slow.editor.texts('warning')[0]!, /still running/);
    await slow.runs.interrupt(slow.folder);
    await running;
  });
});
