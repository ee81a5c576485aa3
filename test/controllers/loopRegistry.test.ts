import assert from 'node:assert/strict';
import { applyCandidateSession } from '../../src/extension/candidates/applyCommands.js';
import type { FolderRef } from '../../src/extension/editorPorts.js';
import type { LoopEvent } from '../../src/extension/runs/loopRegistry.js';
import { LoopStarter } from '../../src/extension/runs/loopStarter.js';
import { resumeSession, rollBackIteration } from '../../src/extension/timeTravel/timeTravelCommands.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { candidateRunsFor, FakeEditor, folderAt, runControllerFor, sessionCommandsFor, timeTravelFor } from '../support/fakeEditor.js';
import { stopRunners } from '../support/processes.js';
import { done, scriptedCliSetup } from '../support/scriptedAgent.js';
import { removeTempDirs } from '../support/testEnvironment.js';

/**
 * The registry of the window's running loops (src/extension/runs/loopRegistry.ts) in
 * plain Node: a single loop and a candidate group of the real runner in one folder,
 * both registered in it, the editor's window stubbed.
 */
function windowWithBoth() {
  // Every agent works until it is interrupted: the single loop's and each candidate's.
  const setup = scriptedCliSetup({ actor: [[{ print: 'working' }, { sleep: 60_000 }]], critic: [[done()]] });
  const editor = new FakeEditor();
  const runs = runControllerFor(editor, setup.env, { showAgentText: false });
  const candidateRuns = candidateRunsFor(editor, setup.env);
  const folder = folderAt(setup.repo);
  /** Resolves once a registry event finds what it waits for. */
  const until = (found: (event: LoopEvent<FolderRef>) => boolean) =>
    new Promise<void>((resolve) => {
      const subscription = editor.registry.onEvent((event) => {
        if (!found(event)) return;
        subscription.dispose();
        resolve();
      });
    });
  /** Starts a loop and a group in the folder; resolves once the loop's agent and both candidates' are at work. */
  async function startBoth() {
    const working = new Set<string>();
    const allWorking = until(({ kind, sessionId, event }) => {
      if (event.type === 'agent_event' && sessionId) working.add(`${kind} ${sessionId}`);
      return working.size === 3;
    });
    const loop = runs.start(folder, { text: 'work' });
    const group = candidateRuns.start(folder, { prompt: 'work', candidates: 'command', times: 2 });
    await allWorking;
    return { loop, group };
  }
  return { ...setup, editor, runs, candidateRuns, folder, startBoth };
}

describe('the registry of running loops (plain Node, the real runner, a stubbed editor)', () => {
  afterEach(stopRunners);
  after(removeTempDirs);

  it('says that something still runs in one way, wherever it is asked', async () => {
    const { editor, runs, candidateRuns, folder, home, startBoth } = windowWithBoth();
    const { loop, group } = await startBoth();
    const store = new SessionStore(home.sessionsDir);
    const [loopSession] = runs.runningSessionIds();
    const candidateSession = [...editor.registry.runningSessionIds()].find((id) => id !== loopSession)!;
    const shown = () => editor.texts('warning');

    assert.equal(await runs.start(folder, { text: 'again' }), undefined);
    assert.equal(await candidateRuns.start(folder, { prompt: 'again', candidates: 'command', times: 1 }), undefined);
    let asked = false;
    const starter = new LoopStarter<FolderRef>({
      runs,
      window: editor.window,
      commands: editor.commands,
      log: editor.log,
      isTrusted: () => true,
      folders: () => [folder],
      forecast: async () => undefined,
    });
    await starter.start(async () => ((asked = true), { text: 'again' }));
    assert.equal(asked, false, 'not asked for a prompt it could not run');
    const timeTravel = timeTravelFor(editor, runs, { store, folderOf: () => folder, changed: () => {} });
    await resumeSession(timeTravel, loopSession!);
    const folderBusy = shown().splice(0);
    assert.deepEqual(folderBusy, [
      `A Codeloops loop is already running in ${folder.name}. Interrupt it first, or wait for it to finish.`,
      `A Codeloops candidate group is already running in ${folder.name}. Interrupt it first, or wait for it to finish.`,
      `A Codeloops loop is already running in ${folder.name}. Interrupt it first, or wait for it to finish.`,
      `A Codeloops loop is already running in ${folder.name}. Interrupt it first, or wait for it to finish.`,
    ]);

    assert.equal(await rollBackIteration(timeTravel, loopSession!, 1), undefined);
    assert.equal(await applyCandidateSession({ ...timeTravel, registry: editor.registry }, candidateSession), undefined);
    assert.equal(await sessionCommandsFor(editor, store).delete(candidateSession), false);
    assert.deepEqual(shown().slice(-3), Array(3).fill('This session is still running. Interrupt it first, or wait for it to finish.'));

    await editor.registry.interrupt({ kind: 'session', id: loopSession! });
    await editor.registry.interrupt({ kind: 'session', id: candidateSession });
    await Promise.all([loop, group]);
  });

  for (const first of ['loop', 'group'] as const) {
    it(`sets the context keys while a loop and a group run in one folder, the ${first} ending first`, async () => {
      const { editor, runs, candidateRuns, folder, startBoth } = windowWithBoth();
      const running = () => editor.context.get('codeloops.running');
      assert.equal(running(), false, 'nothing runs yet');
      const { loop, group } = await startBoth();
      assert.equal(running(), true);
      const [ends, stopFirst, thenSecond] =
        first === 'loop'
          ? [[loop, group] as const, () => runs.interrupt(folder), () => candidateRuns.interrupt(folder)]
          : [[group, loop] as const, () => candidateRuns.interrupt(folder), () => runs.interrupt(folder)];
      await stopFirst();
      await ends[0];
      assert.equal(running(), true, `the ${first} has ended, the other still runs`);
      assert.equal(editor.registry.anyRunning(), true);
      await thenSecond();
      await ends[1];
      assert.equal(running(), false, 'both have ended');
      assert.equal(editor.context.get('codeloops.pausedForReview'), false);
      assert.deepEqual(editor.registry.runningSessionIds(), new Set());
      assert.deepEqual(
        editor.statusItems.map((item) => item.disposed),
        [true, true],
        'each status item went with its run',
      );
    });
  }
});
