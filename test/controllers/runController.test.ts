import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { FolderRef } from '../../src/extension/editorPorts.js';
import type { RunController } from '../../src/extension/runs/runController.js';
import { LoopStarter } from '../../src/extension/runs/loopStarter.js';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';
import { FakeEditor, folderAt, forecastFor, runControllerFor } from '../support/fakeEditor.js';
import { ACTOR_RUNS, hostileRepository } from '../support/hostileFiles.js';
import { stopRunners } from '../support/processes.js';
import { carryOnNaming, done, scriptedCliSetup, type AgentScript } from '../support/scriptedAgent.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { agentBinDirs } from '../support/realAgents.js';
import { createRepo, isolateHome, removeTempDirs, tempDir, writeFile } from '../support/testEnvironment.js';

/**
 * The extension's run controller in plain Node: the real runner (dist/cli.js) as a
 * child process with a scripted agent, the editor's window stubbed by FakeEditor.
 * What the user is told, and what each button does, is decided here.
 */
function controllerFor(script: AgentScript, options: { editorSettings?: string; trusted?: boolean } = {}) {
  const setup = scriptedCliSetup(script);
  const editor = new FakeEditor();
  const runs = runControllerFor(editor, setup.env, options);
  return { ...setup, editor, runs, folder: folderAt(setup.repo) };
}

describe('run controller (plain Node, the real runner, a stubbed editor)', () => {
  // A test that fails halfway leaves no runner or agent behind for the tests after it.
  afterEach(stopRunners);
  after(removeTempDirs);

  it('runs a loop: the status item and context key while it runs, every event, then a notification that opens the session', async () => {
    const { runs, editor, folder } = controllerFor({
      actor: [[{ write: { path: 'a.txt', content: 'a\n' } }]],
      critic: [[carryOnNaming('again')], [done('made a')]],
    });
    editor.answer(/^Codeloops finished/, 'Open Session');
    const events: RunEvent[] = [];
    runs.onEvent(({ event }) => events.push(event));
    let runningDuring: string[] = [];
    runs.onEvent(({ event }) => {
      if (event.type === 'iteration_started') runningDuring = [...runs.runningSessionIds()];
    });
    const end = await runs.start(folder, { text: 'make a' });
    await editor.settled();
    assert.ok(end?.kind === 'finished', end?.kind);
    assert.equal(end.summary.status, 'success');
    assert.deepEqual(runningDuring, [end.summary.session_id], 'counted as running while it ran');
    assert.deepEqual(runs.runningSessionIds(), new Set(), 'and not after');
    assert.deepEqual(
      events.filter((event) => event.type === 'iteration_finished').map((event) => event.type === 'iteration_finished' && event.decision),
      ['CONTINUE', 'DONE'],
    );
    assert.deepEqual(editor.statusItems, [{ folder: folder.name, disposed: true }]);
    assert.equal(editor.context.get('codeloops.running'), false);
    assert.deepEqual(editor.texts('info'), [`Codeloops finished in ${folder.name} after 2 iterations: made a`]);
    assert.deepEqual(editor.executed, [{ command: 'codeloops.openViewer', args: [end.summary.session_id] }]);
    assert.ok(editor.logLines.includes('warn: critic: CONTINUE'), 'the log follows the loop');
    assertValidSessionFile(end.summary.session_file);
  });

  it('refuses to start a second loop in a folder that runs one', async () => {
    const { runs, editor, folder } = controllerFor({ actor: [[{ print: 'slow' }, { sleep: 60_000 }]], critic: [[done()]] });
    const first = runs.start(folder, { text: 'slow' });
    await new Promise<void>((resolve) => runs.onEvent(({ event }) => event.type === 'agent_event' && resolve()));
    assert.equal(await runs.start(folder, { text: 'again' }), undefined);
    assert.match(editor.texts('warning')[0]!, /already running in/);
    await runs.interrupt();
    const end = await first;
    assert.ok(end?.kind === 'finished' && end.summary.status === 'interrupted');
  });

  it('asks which loop to stop when several run, and stops only that one', async () => {
    const one = controllerFor({ actor: [[{ print: 'slow' }, { sleep: 60_000 }]], critic: [[done()]] });
    const twoFolder = folderAt(scriptedCliSetup({}).repo, 'second');
    const started = new Set<string>();
    const bothRunning = new Promise<void>((resolve) =>
      one.runs.onEvent(({ folder, event }) => {
        if (event.type === 'agent_event') started.add(folder.name);
        if (started.size === 2) resolve();
      }),
    );
    const first = one.runs.start(one.folder, { text: 'slow one' });
    const second = one.runs.start(twoFolder, { text: 'slow two' });
    await bothRunning;
    one.editor.answer(/^Which loop should stop\?/, 'second');
    await one.runs.interrupt();
    const secondEnd = await second;
    assert.deepEqual(one.editor.shown.find((entry) => entry.kind === 'pick')?.actions.sort(), [one.folder.name, 'second'].sort());
    assert.ok(secondEnd?.kind === 'finished' && secondEnd.summary.status === 'interrupted');
    assert.deepEqual(
      one.runs.runningLoops().map((loop) => loop.folder.name),
      [one.folder.name],
      'the other loop goes on',
    );
    await one.runs.interrupt(one.folder);
    await first;
  });

  it('decides by the refusal’s code what to offer: a missing agent opens the setting for its path', async () => {
    // Cursor: no package installs it, so it is on no PATH (npm test puts node_modules/.bin, with Gemini CLI, on PATH).
    const { runs, editor, folder } = controllerFor({}, { editorSettings: JSON.stringify({ agent: 'cursor' }) });
    editor.answer(/could not start/, 'Set Agent Path');
    const end = await runs.start(folder, { text: 'x' });
    await editor.settled();
    assert.ok(end?.kind === 'refused' && end.code === 'agent_missing');
    const [error] = editor.shown.filter((entry) => entry.kind === 'error');
    // The editor ran the same check as `codeloops doctor`, with the editor's settings: its finding and its fix.
    assert.match(
      error!.text,
      /could not start in .*: "cursor-agent" was not found on PATH\. Fix: install it \(see https:\/\/cursor\.com\/cli\), or set \[agents\.cursor\] path/,
    );
    assert.deepEqual(error!.actions, ['Set Agent Path', 'Show Log']);
    assert.deepEqual(editor.executed, [{ command: 'workbench.action.openSettings', args: ['codeloops.agentPaths'] }]);
    assert.ok(editor.logLines.some((line) => /codeloops doctor: "cursor-agent" was not found on PATH/.test(line)));
  });

  /** Controllers whose loops run the real Claude Code: stopped after each test, whatever happened. */
  const realControllers: RunController<FolderRef>[] = [];
  afterEach(() => realControllers.splice(0).forEach((runs) => runs.dispose()));

  /** A folder whose agent is the real Claude Code CLI, in a home of its own where it is not logged in. */
  function realClaudeController(env: Record<string, string>) {
    const home = isolateHome();
    home.restore();
    const agentsHome = tempDir('codeloops-agent-home-');
    const configFile = path.join(home.configHome, 'codeloops', 'config.toml');
    writeFile(home.configHome, 'codeloops/config.toml', '[defaults]\nagent = "claude"\n');
    const editor = new FakeEditor();
    const runs = runControllerFor(
      editor,
      {
        ...home.env,
        HOME: agentsHome,
        CLAUDE_CONFIG_DIR: path.join(agentsHome, '.claude'),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        // Nothing listens there: no request leaves this machine, whatever the CLI tries.
        ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
        ANTHROPIC_API_KEY: '',
        PATH: [...agentBinDirs(['claude']), process.env.PATH ?? ''].join(path.delimiter),
        ...env,
      },
      { showAgentText: false },
    );
    realControllers.push(runs);
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    return { runs, editor, folder: folderAt(repo), configFile };
  }

  it('when an agent cannot log in, asks the doctor why: a Claude Code that is not logged in gets a terminal to log in', async () => {
    const { runs, editor, folder } = realClaudeController({ IS_SANDBOX: '1' });
    editor.answer(/^Codeloops failed/, 'Open Terminal');
    const end = await runs.start(folder, { text: 'x' });
    await editor.settled();
    // "Not logged in" is no failure of its work: the loop stops at once (agent_auth), it does not try again.
    assert.ok(end?.kind === 'finished' && end.summary.error_code === 'agent_auth', JSON.stringify(end));
    const [error] = editor.shown.filter((entry) => entry.kind === 'error');
    assert.match(error!.text, /^Codeloops failed in .*: .* Claude Code has no login: .* Fix: run "claude" once and log in/);
    assert.deepEqual(error!.actions, ['Open Terminal', 'Open Session']);
    assert.deepEqual(editor.executed, [{ command: 'workbench.action.terminal.new', args: [] }]);
  });

  it('as root without IS_SANDBOX, Claude Code refuses to run: the editor says why and opens the global config', async function () {
    if (process.getuid?.() !== 0) this.skip(); // the rule is only about root
    // A key, so that only root is wrong.
    const { runs, editor, folder, configFile } = realClaudeController({
      IS_SANDBOX: '',
      ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-tests',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    });
    editor.answer(/^Codeloops failed/, 'Open Global Config');
    const end = await runs.start(folder, { text: 'x' });
    await editor.settled();
    assert.ok(end?.kind === 'finished' && end.summary.error_code === 'actor_failed', JSON.stringify(end));
    const [error] = editor.shown.filter((entry) => entry.kind === 'error');
    assert.match(
      error!.text,
      /Running as root, Claude Code refuses to skip permission prompts .* Fix: on a disposable machine, set IS_SANDBOX = "1" under \[agents\.claude\.env\]/,
    );
    assert.deepEqual(editor.texts('openFile'), [configFile]);
  });

  it('offers to open the config file that is wrong, and to initialize a folder that is not a repository', async () => {
    const broken = controllerFor({});
    writeFile(broken.repo, 'codeloops.toml', 'agent = "claude"\n[actor\n');
    broken.editor.answer(/could not start/, 'Open Config File');
    const configEnd = await broken.runs.start(broken.folder, { text: 'x' });
    await broken.editor.settled();
    assert.ok(configEnd?.kind === 'refused' && configEnd.code === 'config_invalid');
    assert.deepEqual(broken.editor.texts('openFile'), [path.join(broken.repo, 'codeloops.toml')]);

    const plain = controllerFor({});
    const notARepo = folderAt(tempDir('not-a-repo-'));
    plain.editor.answer(/could not start/, 'Initialize Repository');
    const repoEnd = await plain.runs.start(notARepo, { text: 'x' });
    await plain.editor.settled();
    assert.ok(repoEnd?.kind === 'refused' && repoEnd.code === 'not_a_repository');
    assert.deepEqual(plain.editor.executed, [{ command: 'git.init', args: [] }]);
  });

  it('leaves a refusal its caller handles to the caller: nothing is shown', async () => {
    const { runs, editor } = controllerFor({});
    const end = await runs.start(folderAt(tempDir('not-a-repo-')), { text: 'x' }, { handles: ['not_a_repository'] });
    await editor.settled();
    assert.ok(end?.kind === 'refused');
    assert.deepEqual(editor.texts('error'), []);
  });
});

describe('workspace trust is the editor’s word for the project’s codeloops.toml', () => {
  after(removeTempDirs);
  afterEach(stopRunners);

  it('in a trusted workspace, runs what the committed file names', async () => {
    const { runs, editor } = controllerFor({}, { trusted: true });
    const hostile = hostileRepository();
    const end = await runs.start(folderAt(hostile.repo), { text: 'fix the typo' });
    await editor.settled();
    assert.ok(end?.kind === 'finished' && end.summary.status === 'success', JSON.stringify(end));
    assert.equal(fs.readFileSync(hostile.marker, 'utf8'), 'pwned\n', 'the project’s own actor ran');
  });

  it('in a workspace it does not trust, runs none of it, says what the file would run, and offers to manage trust', async () => {
    const { runs, editor } = controllerFor({}, { trusted: false });
    const hostile = hostileRepository();
    editor.answer(/could not start/, 'Manage Workspace Trust');
    // Reached without the starter's own check (as a resume from the tree would be): the runner still refuses.
    const end = await runs.start(folderAt(hostile.repo), { text: 'fix the typo' });
    await editor.settled();
    assert.ok(end?.kind === 'refused' && end.code === 'project_untrusted', JSON.stringify(end));
    assert.equal(fs.existsSync(hostile.marker), false, 'nothing ran');
    const [error] = editor.shown.filter((entry) => entry.kind === 'error');
    assert.ok(error!.text.includes(`[actor] command: ${ACTOR_RUNS}`), error!.text);
    assert.deepEqual(error!.actions, ['Manage Workspace Trust', 'Show Log']);
    assert.deepEqual(editor.executed, [{ command: 'workbench.trust.manage', args: [] }]);
  });

  it('even in a trusted workspace, refuses project arguments that widen what an agent may do, and opens the file', async () => {
    const { runs, editor, repo } = controllerFor({}, { trusted: true });
    writeFile(repo, 'codeloops.toml', '[agents.command]\nargs = ["--x"]\n[agents.claude]\nargs = ["--permission-mode", "bypassPermissions"]\n');
    editor.answer(/could not start/, 'Open Config File');
    const end = await runs.start(folderAt(repo), { text: 'x' });
    await editor.settled();
    assert.ok(end?.kind === 'refused' && end.code === 'config_invalid', JSON.stringify(end));
    assert.deepEqual({ key: end.details.key, argument: end.details.argument }, { key: '[agents.claude] args', argument: '--permission-mode' });
    assert.match(editor.texts('error')[0]!, /\[agents\.claude\] args: "--permission-mode" changes what Claude Code may do/);
    assert.deepEqual(editor.texts('openFile'), [path.join(repo, 'codeloops.toml')]);
  });
});

describe('loop starter (Run Prompt, before a loop starts)', () => {
  after(removeTempDirs);

  function starterFor(options: { trusted?: boolean; folders?: (own: FolderRef) => FolderRef[] }) {
    const { runs, editor, folder, env } = controllerFor({ actor: [[{ print: 'x' }]], critic: [[done()]] });
    const starter = new LoopStarter<FolderRef>({
      runs,
      window: editor.window,
      commands: editor.commands,
      log: editor.log,
      isTrusted: () => options.trusted ?? true,
      folders: () => options.folders?.(folder) ?? [folder],
      forecast: forecastFor(env),
    });
    return { starter, editor, folder, runs };
  }

  it('never runs in an untrusted workspace, and offers to manage trust', async () => {
    const { starter, editor } = starterFor({ trusted: false });
    editor.answer(/untrusted workspace/, 'Manage Workspace Trust');
    let asked = false;
    await starter.start(async () => {
      asked = true;
      return { text: 'x' };
    });
    await editor.settled();
    assert.equal(asked, false, 'not even asked for a prompt');
    assert.match(editor.texts('error')[0]!, /does not run loops in an untrusted workspace/);
    assert.deepEqual(editor.executed, [{ command: 'workbench.trust.manage', args: [] }]);
  });

  it('asks for a folder when there are several, offering the last one picked first', async () => {
    const other = folderAt(tempDir('other-'), 'other');
    const { starter: withTwo, editor, folder } = starterFor({ folders: (own) => [other, own] });
    editor.answer(/^Run the loop in which folder\?/, folder.name);
    const prompts: string[] = [];
    await withTwo.start(async (chosen) => {
      prompts.push(chosen.name);
      return undefined; // the user cancels the prompt: nothing runs
    });
    editor.answer(/^Run the loop in which folder\?/, (labels) => labels[0]);
    await withTwo.start(async (chosen) => {
      prompts.push(chosen.name);
      return undefined;
    });
    const picks = editor.shown.filter((entry) => entry.kind === 'pick').map((entry) => entry.actions);
    assert.deepEqual(picks, [
      ['other', folder.name],
      [folder.name, 'other'],
    ]);
    assert.deepEqual(prompts, [folder.name, folder.name]);
  });

  it('says so when no folder is open', async () => {
    const { starter, editor } = starterFor({ folders: () => [] });
    await starter.start(async () => ({ text: 'x' }));
    assert.match(editor.texts('error')[0]!, /open the folder of a git repository first/);
  });
});
