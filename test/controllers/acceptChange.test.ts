import assert from 'node:assert/strict';
import * as hunkReview from '../../src/review/hunkReview.js';
import { acceptChangeCommand, type AcceptChangeDeps } from '../../src/extension/review/reviewCommands.js';
import { LoopStarter } from '../../src/extension/runs/loopStarter.js';
import { sessionsDir, sidecarDirOf } from '../../src/sessionFormat/sessionFiles.js';
import { SessionLibrary } from '../../src/sessionView/sessionLibrary.js';
import { readReviewRecords } from '../../src/sessions/sidecarReader.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { FakeEditor, runControllerFor } from '../support/fakeEditor.js';
import { isolateHome, removeTempDirs, type IsolatedHome } from '../support/testEnvironment.js';
import { WEAKENED_FILE, weakenedSession } from '../support/weakenedSession.js';

/**
 * Accept on a protected change, as the session viewer offers it
 * (src/extension/review/reviewCommands.ts): in plain Node, on a session the built CLI
 * made (its actor skipped the failing test), the editor's window stubbed.
 */
describe('accepting a protected change in the editor (plain Node, a session of the built CLI, a stubbed editor)', () => {
  let home: IsolatedHome;
  let sessionId: string;
  before(async () => {
    home = isolateHome();
    ({ sessionId } = await weakenedSession(home));
  });
  after(() => {
    home.restore();
    removeTempDirs();
  });

  function setup(options: { trusted?: boolean } = {}) {
    const editor = new FakeEditor();
    const store = new SessionStore(sessionsDir());
    const library = new SessionLibrary(store, sidecarDirOf);
    const changed: string[] = [];
    const waiters: Array<() => void> = [];
    /** Resolves once the views were told `count` times that the session changed (an Undo pressed in a notification is done). */
    const changedTimes = (count: number) =>
      new Promise<void>((resolve) => (changed.length >= count ? resolve() : waiters.push(() => changed.length >= count && resolve())));
    const starter = new LoopStarter({
      ...editor,
      runs: runControllerFor(editor, home.env),
      isTrusted: () => options.trusted ?? true,
      folders: () => [],
      forecast: async () => undefined,
    });
    const deps: AcceptChangeDeps = {
      store,
      hunks: hunkReview,
      window: editor.window,
      log: editor.log,
      sidecarDirOf,
      changed: (id) => {
        changed.push(id);
        library.invalidate(id);
        for (const waiter of waiters) waiter();
      },
      ensureTrusted: (action, why) => starter.ensureTrusted(action, why),
    };
    const records = async () => readReviewRecords(sidecarDirOf(sessionId));
    const standing = async () => (await library.view(sessionId)).iterations[0]!.protected_standing.map((one) => [one.change.file, one.status, one.reason]);
    return { editor, deps, changed, changedTimes, records, standing };
  }

  it('asks why, records change_accepted with the reason, the view shows it accepted; Undo in the notification takes it back', async () => {
    const { editor, deps, changed, changedTimes, records, standing } = setup();
    assert.deepEqual(await standing(), [[WEAKENED_FILE, 'weakening', null]], 'as the run left it');
    // The reason typed the first time; none the second.
    const reasons = ['the test is flaky, tracked in #12', ''];
    editor.answer(/^Accept the change of test\/sum\.test\.js in iteration 1/, () => reasons.shift());
    const record = await acceptChangeCommand(deps, sessionId, 1, WEAKENED_FILE);
    await editor.settled();
    assert.deepEqual(
      [record?.type, record?.iteration, record?.kinds, record?.reason],
      ['change_accepted', 1, ['skip_added'], 'the test is flaky, tracked in #12'],
    );
    assert.deepEqual(changed, [sessionId], 'the views refresh');
    assert.deepEqual(await standing(), [[WEAKENED_FILE, 'accepted', 'the test is flaky, tracked in #12']]);
    const told = editor.shown.find((entry) => entry.kind === 'info')!;
    assert.match(told.text, /^Codeloops: accepted test\/sum\.test\.js: a test skipped \(.*\)\. It no longer refuses DONE; the critic is told why\.$/);
    assert.deepEqual(told.actions, ['Undo']);

    // Accepted again without a reason, then undone from the notification.
    editor.answer(/^Codeloops: accepted/, 'Undo');
    const undone = changedTimes(3);
    await acceptChangeCommand(deps, sessionId, 1, WEAKENED_FILE);
    await undone;
    assert.deepEqual(
      (await records()).map((each) => [each.type, 'reason' in each ? each.reason : undefined]),
      [
        ['change_accepted', 'the test is flaky, tracked in #12'],
        ['change_accepted', null],
        ['acceptance_undone', undefined],
      ],
    );
    assert.match(editor.texts('info').at(-1)!, /test\/sum\.test\.js is no longer accepted: while its change stands, DONE is refused/);
    assert.deepEqual(await standing(), [[WEAKENED_FILE, 'weakening', null]]);
  });

  it('records nothing when the reason is cancelled, or for a file the iteration did not weaken (and says so)', async () => {
    const { editor, deps, records, changed } = setup();
    const before = (await records()).length;
    assert.equal(await acceptChangeCommand(deps, sessionId, 1, WEAKENED_FILE), undefined, 'the input box dismissed');
    editor.answer(/^Accept the change/, 'because');
    assert.equal(await acceptChangeCommand(deps, sessionId, 1, 'src/sum.js'), undefined);
    assert.match(editor.texts('warning')[0]!, /Iteration 1 of session .* has no protected change of src\/sum\.js \(it has: test\/sum\.test\.js\)/);
    assert.equal((await records()).length, before);
    assert.deepEqual(changed, []);
  });

  it('in an untrusted workspace, asks for trust instead and records nothing', async () => {
    const { editor, deps, records } = setup({ trusted: false });
    const before = (await records()).length;
    editor.answer(/^Accept the change/, 'because');
    assert.equal(await acceptChangeCommand(deps, sessionId, 1, WEAKENED_FILE), undefined);
    const refusal = editor.shown.find((entry) => entry.kind === 'error')!;
    assert.match(refusal.text, /does not accept a protected change in an untrusted workspace: it changes what a loop here accepts as done/);
    assert.deepEqual(refusal.actions, ['Manage Workspace Trust']);
    assert.equal(editor.texts('input').length, 0, 'no reason asked');
    assert.equal((await records()).length, before);
  });
});
