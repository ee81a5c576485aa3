import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { LoopProcess } from '../../src/extension/runner/loopProcess.js';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';
import { RunnerClient } from '../../src/extension/runner/runnerClient.js';
import { runnerClientFor } from '../support/fakeEditor.js';
import { carryOnNaming, configureScriptedAgent, done, type AgentScript } from '../support/scriptedAgent.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo, isolateHome, removeTempDirs, tempDir } from '../support/testEnvironment.js';
import { stopRunners } from '../support/processes.js';

/** The runner as the extension starts it: a child process streaming NDJSON events. */
function start(script: AgentScript, options: { prompt?: { text: string } | { file: string }; workingDir?: string; editorSettings?: string } = {}) {
  const home = isolateHome();
  home.restore();
  const agent = configureScriptedAgent(home.configHome, script);
  const repo = options.workingDir ?? createRepo({ files: { 'a.txt': 'a\n' } });
  const events: RunEvent[] = [];
  const process = new LoopProcess(
    runnerClientFor(home.env),
    {
      workingDir: repo,
      prompt: options.prompt ?? { text: '-n is not a flag 🎉' },
      editorSettings: options.editorSettings,
    },
    (event) => events.push(event),
  );
  return { process, events, agent, home, repo };
}

describe('the runner as a child process (how the extension runs loops)', () => {
  // A test that fails halfway leaves no runner or agent behind for the tests after it.
  afterEach(stopRunners);
  after(removeTempDirs);

  it('streams validated events and reports the outcome; the prompt arrives untouched', async () => {
    const { process, events, agent } = start({
      actor: [[{ write: { path: 'work.txt', content: 'work\n' } }, { print: 'working' }]],
      critic: [[carryOnNaming('again')], [done('ok')]],
    });
    const end = await process.done;
    assert.equal(end.kind, 'finished');
    assert.ok(end.kind === 'finished' && end.summary.status === 'success' && end.summary.iterations === 2);
    assert.deepEqual(
      events.filter((event) => event.type === 'iteration_finished').map((event) => event.type === 'iteration_finished' && event.decision),
      ['CONTINUE', 'DONE'],
    );
    assert.equal(agent.prompt('actor', 1), '-n is not a flag 🎉');
    assert.ok(end.kind === 'finished' && assertValidSessionFile(end.summary.session_file));
  });

  it('interrupts like Ctrl+C: the session ends interrupted', async () => {
    const { process, events } = start({ actor: [[{ print: 'slow' }, { sleep: 60_000 }]], critic: [[done()]] });
    while (!events.some((event) => event.type === 'agent_event')) await new Promise((resolve) => setTimeout(resolve, 50));
    process.interrupt();
    const end = await process.done;
    assert.ok(end.kind === 'finished' && end.summary.status === 'interrupted');
  });

  it('reports a run that could not start by its code, with the runner’s own words and details', async () => {
    const folder = tempDir();
    const { process } = start({}, { workingDir: folder });
    const end = await process.done;
    assert.ok(end.kind === 'refused', end.kind);
    assert.equal(end.code, 'not_a_repository');
    assert.equal(end.details.directory, folder);
    assert.match(end.message, /is not inside a git repository/);
    assert.doesNotMatch(end.message, /-d\b/, 'the engine names no command-line flags');
  });

  it('calls a runner that exits without saying why crashed, with its stderr, never refused', async () => {
    const runner = path.join(tempDir(), 'broken-runner.js');
    fs.writeFileSync(runner, "process.stderr.write('codeloops: something broke inside'); process.exit(2);\n");
    const events: RunEvent[] = [];
    const client = new RunnerClient({ cliPath: runner, nodePath: globalThis.process.execPath, isTrusted: () => true });
    const end = await new LoopProcess(client, { workingDir: tempDir(), prompt: { text: 'x' } }, (event) => events.push(event)).done;
    assert.equal(end.kind, 'crashed');
    assert.ok(end.kind === 'crashed' && /something broke inside/.test(end.message));
    assert.ok(end.kind === 'crashed' && end.code === 'runner_crashed', 'a crash carries its code too');
    assert.deepEqual(events, []);
  });

  it('passes the editor’s settings between the global and the project config', async () => {
    const { process, events } = start(
      { actor: [[{ print: 'x' }]], critic: [[carryOnNaming('more')]] },
      { editorSettings: JSON.stringify({ max_iterations: 1, critic: { model: 'from-the-editor' } }) },
    );
    const end = await process.done;
    assert.ok(end.kind === 'finished' && end.summary.status === 'max_iterations_reached' && end.summary.iterations === 1);
    const started = events.find((event) => event.type === 'run_started');
    assert.ok(started?.type === 'run_started' && started.critic_model === 'from-the-editor' && started.max_iterations === 1);
  });
});
