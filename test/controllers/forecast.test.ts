import assert from 'node:assert/strict';
import path from 'node:path';
import type { FolderRef } from '../../src/extension/editorPorts.js';
import { LoopStarter } from '../../src/extension/runs/loopStarter.js';
import { runStatusOf } from '../../src/extension/runs/runStatus.js';
import { askForTask, FORECASTING } from '../../src/extension/runs/taskInput.js';
import type { Forecast } from '../../src/sessionFormat/forecast.js';
import { FakeEditor, folderAt, forecastFor, runControllerFor } from '../support/fakeEditor.js';
import { writeForecastSessions } from '../support/forecastSessions.js';
import { stopRunners } from '../support/processes.js';
import { done, scriptedCliSetup } from '../support/scriptedAgent.js';
import { removeTempDirs } from '../support/testEnvironment.js';

/**
 * The forecast in the editor, in plain Node: the Run Prompt box opens at once and its
 * prompt line takes the forecast (the built CLI's `forecast --json` for the folder,
 * with the editor's settings) when it comes; the status bar then shows the loop's
 * spend against the forecast's p90 and its cap.
 */
describe('forecast in the editor (Run Prompt box, status bar; the real runner, a stubbed editor)', () => {
  afterEach(stopRunners);
  after(removeTempDirs);

  /** A folder whose past tasks (the scripted agent in both roles) give the shop forecast; its forecast held until `release`. */
  function setup(history = true) {
    const scripted = scriptedCliSetup({ actor: [[{ hang: true }]], critic: [[done()]] });
    if (history) writeForecastSessions(scripted.home.sessionsDir, { shop: path.basename(scripted.repo), agent: 'Command' });
    const editorSettings = JSON.stringify({ max_cost_usd: 5 });
    const editor = new FakeEditor();
    const runs = runControllerFor(editor, scripted.env, { editorSettings });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let known: Forecast | undefined;
    const forecast = (folder: FolderRef) => held.then(async () => (known = await forecastFor(scripted.env, editorSettings)(folder)));
    const starter = (folder: FolderRef) => new LoopStarter<FolderRef>({ ...editor, runs, isTrusted: () => true, folders: () => [folder], forecast });
    return { ...scripted, editor, runs, starter, release, known: () => known };
  }

  it('opens the box before the forecast is known, shows it in the prompt line, then shows the spend against its p90 and the cap', async () => {
    const { repo, editor, runs, starter, release, known } = setup();
    const folder = folderAt(repo);
    editor.answer(/Run Prompt/, 'Add the feature');
    const opened = editor.nextShown('input');
    const started = starter(folder).start(askForTask(editor.window));
    const box = await opened;
    assert.equal(known(), undefined, 'the box opened while the forecast was still held');
    assert.match(box.text, new RegExp(`^What should the agent do\\? .*${FORECASTING.replace(/[.*?…]/g, '.')}$`));

    const actorRuns = new Promise<void>((resolve) => runs.onEvent(({ event }) => event.type === 'phase' && event.phase === 'actor' && resolve()));
    release();
    await actorRuns;
    assert.match(
      box.later ?? '',
      /^What should the agent do\? .*From 6 past tasks of this project: iterations median 2, p90 5; cost median \$1\.10, p90 \$2\.43; duration median 2m 0s, p90 6m 40s\.$/,
    );
    const [loop] = runs.runningLoops();
    const status = runStatusOf(loop!);
    assert.match(status.text, /· \$0\.00 of \$5\.00 \(p90 \$2\.43\)$/);
    assert.match(status.tooltip, /\$0\.00 of \$5\.00 \(p90 \$2\.43\)/);
    await runs.interrupt(folder);
    await started;
  });

  it('says there is no forecast in the box when fewer than five past tasks compare, and runs nothing when cancelled', async () => {
    const { repo, editor, runs, starter, release } = setup(false);
    const folder = folderAt(repo);
    release();
    await starter(folder).start(askForTask(editor.window));
    const [box] = editor.shown.filter((entry) => entry.kind === 'input');
    assert.match(box!.later ?? '', /No forecast: 0 past tasks with these agents and models, at least 5 needed\.$/);
    assert.deepEqual(runs.runningLoops(), [], 'cancelled: nothing runs');
  });
});
