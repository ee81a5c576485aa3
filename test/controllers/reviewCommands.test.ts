import assert from 'node:assert/strict';
import * as hunkReview from '../../src/review/hunkReview.js';
import fs from 'node:fs';
import path from 'node:path';
import { rejectHunkCommand, stageCommand, type ReviewCommandsDeps } from '../../src/extension/review/reviewCommands.js';
import { sessionsDir } from '../../src/sessionFormat/sessionFiles.js';
import { readReview } from '../../src/sessions/reviewState.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { sidecarDirOf } from '../../src/sessionFormat/sessionFiles.js';
import { FakeEditor, folderAt, runControllerFor } from '../support/fakeEditor.js';
import { numberedLines as lines } from '../support/reviewedIterations.js';
import { carryOnNaming, configureScriptedAgent, done, type AgentScript } from '../support/scriptedAgent.js';
import { createRepo, git, isolateHome, removeTempDirs, type IsolatedHome } from '../support/testEnvironment.js';

/**
 * Review as the editor offers it (src/extension/review/reviewCommands.ts and the pause
 * notification), in plain Node: the real runner as a child process and the real engine
 * on real repositories; the editor's window stubbed.
 */
describe('review in the editor: the pause notification, rejecting and staging hunks (plain Node, the real runner, a stubbed editor)', () => {
  let home: IsolatedHome;
  before(() => (home = isolateHome()));
  after(() => {
    home.restore();
    removeTempDirs();
  });

  function setup(script: AgentScript, editorSettings?: string) {
    configureScriptedAgent(home.configHome, script);
    const repo = createRepo({ files: { 'app.txt': lines(20) } });
    const editor = new FakeEditor();
    const runs = runControllerFor(editor, home.env, { editorSettings, showAgentText: false });
    const changed: string[] = [];
    const waiters: Array<() => void> = [];
    /** Resolves once the session has changed `count` times (an action the user set off from a notification is done). */
    const changes = (count: number) =>
      new Promise<void>((resolve) => (changed.length >= count ? resolve() : waiters.push(() => changed.length >= count && resolve())));
    const review: ReviewCommandsDeps = {
      store: new SessionStore(sessionsDir()),
      hunks: hunkReview,
      window: editor.window,
      log: editor.log,
      sidecarDirOf: (sessionId) => sidecarDirOf(sessionId),
      changed: (id) => {
        changed.push(id);
        for (const waiter of waiters) waiter();
      },
    };
    return { repo, editor, runs, review, changed, changes, folder: folderAt(repo) };
  }

  it('pauses after an iteration that goes on: the notification says so, the status shows it, Continue goes on', async () => {
    const { runs, editor, folder } = setup(
      {
        actor: [[{ write: { path: 'app.txt', content: lines(20, { 1: 'one' }) } }], [{ write: { path: 'app.txt', content: lines(20, { 1: 'ONE' }) } }]],
        critic: [[carryOnNaming('louder')], [done()]],
      },
      JSON.stringify({ review: 'pause' }),
    );
    let pausedSeen: number | null = null;
    runs.onEvent(({ event }) => {
      if (event.type === 'review_paused') pausedSeen = runs.runningLoops()[0]?.progress.pausedAfter ?? null;
    });
    editor.answer(/is waiting for your review of iteration 1/, 'Continue');
    const end = await runs.start(folder, { text: 'edit app' });
    await editor.settled();
    assert.ok(end?.kind === 'finished', end?.kind);
    assert.equal(end.summary.status, 'success');
    assert.equal(pausedSeen, 1, 'the loop was known to wait');
    const asked = editor.shown.find((entry) => /waiting for your review/.test(entry.text))!;
    assert.deepEqual(asked.actions, ['Continue', 'Show Changes', 'Stop']);
    assert.equal(editor.context.get('codeloops.pausedForReview'), false, 'not after it went on');
  });

  it('Stop from the notification ends a paused loop as interrupted', async () => {
    const { runs, editor, folder } = setup(
      { actor: [[{ write: { path: 'app.txt', content: 'x\n' } }]], critic: [[carryOnNaming('more')]] },
      JSON.stringify({ review: 'pause' }),
    );
    editor.answer(/is waiting for your review/, 'Stop');
    const end = await runs.start(folder, { text: 'edit app' });
    assert.ok(end?.kind === 'finished');
    assert.equal(end.summary.status, 'interrupted');
    assert.equal(end.summary.iterations, 1);
  });

  it('rejects a hunk with the reason the user types, offers Undo at once, and stages an iteration', async () => {
    const { runs, editor, folder, review, repo, changed, changes } = setup({
      actor: [[{ write: { path: 'app.txt', content: lines(20, { 2: 'two', 18: 'eighteen' }) } }]],
      critic: [[done()]],
    });
    const end = await runs.start(folder, { text: 'edit app' });
    assert.ok(end?.kind === 'finished');
    const id = end.summary.session_id;

    editor.answer(/^Reject hunk 2 of iteration 1/, 'keep line 18').answer(/Undid hunk 2 of iteration 1/, 'Undo');
    const outcome = await rejectHunkCommand(review, id, 1, 2);
    assert.equal(outcome?.result, 'rejected');
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(20, { 2: 'two' }));
    assert.equal((await readReview([sidecarDirOf(id)])).rejections[0]?.reason, 'keep line 18');
    await changes(2);
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(20, { 2: 'two', 18: 'eighteen' }), 'Undo put it back');
    assert.deepEqual(changed, [id, id]);

    // Escape in the reason box changes nothing.
    assert.equal(await rejectHunkCommand({ ...review, window: new FakeEditor().window }, id, 1, 1), undefined);
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(20, { 2: 'two', 18: 'eighteen' }));

    const staged = await stageCommand(review, id, 1);
    assert.equal(staged?.result, 'staged');
    assert.match(git(repo, 'diff', '--cached', '--name-only'), /app\.txt/);
  });

  it('says why it will not reject while the loop is at work', async () => {
    const { runs, editor, folder, review, repo } = setup({
      actor: [[{ write: { path: 'app.txt', content: lines(20, { 5: 'five' }) } }], [{ print: 'slow' }, { sleep: 60_000 }]],
      critic: [[carryOnNaming('again')]],
    });
    const running = runs.start(folder, { text: 'edit app' });
    const id = await new Promise<string>((resolve) =>
      runs.onEvent(({ event }) => {
        if (event.type === 'phase' && event.phase === 'actor' && event.status === 'started' && event.iteration === 2)
          resolve(runs.runningLoops()[0]!.sessionId!);
      }),
    );
    editor.answer(/^Reject hunk/, '');
    assert.equal(await rejectHunkCommand(review, id, 1, 1), undefined);
    assert.match(editor.texts('warning').at(-1)!, /at work in .*paused for review, or once it has ended/);
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(20, { 5: 'five' }));
    await runs.interrupt();
    await running;
  });
});
