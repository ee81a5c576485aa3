import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import type { CodeloopsApi } from '../../../src/extension/extension.js';
import { COMMANDS, URI_SCHEMES, VIEWS } from '../../../src/extension/ids.js';
import type { FileNode, IterationNode, SessionNode, TreeNode } from '../../../src/extension/sessionsTree/sessionsTreeModel.js';
import { EVENTS_FILE, sessionsDir, sidecarDir } from '../../../src/sessionFormat/sessionFiles.js';
import { SessionStore } from '../../../src/sessions/sessionStore.js';
import { rollBackIteration, undoLastRollback } from '../../../src/extension/timeTravel/timeTravelCommands.js';

/**
 * Runs inside the extension host of a real VS Code, against a workspace that is a
 * git repository, with agents scripted through the `command` agent (see
 * test/editor/extensionHostSuite.ts, which writes their script and the global config).
 */

const EXTENSION_ID = 'codeloops.codeloops';

function workspaceFolder(): vscode.WorkspaceFolder {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'the test workspace is open');
  return folder;
}

async function api(): Promise<CodeloopsApi> {
  const extension = vscode.extensions.getExtension<CodeloopsApi>(EXTENSION_ID);
  assert.ok(extension, `${EXTENSION_ID} is installed`);
  return extension.activate();
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function diffTabs(): vscode.TabInputTextDiff[] {
  return vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .map((tab) => tab.input)
    .filter((input): input is vscode.TabInputTextDiff => input instanceof vscode.TabInputTextDiff);
}

describe('Codeloops in a real VS Code', () => {
  let codeloops: CodeloopsApi;
  let diffFile: FileNode | undefined;

  before(async () => {
    codeloops = await api();
  });

  it('registers every command of its manifest', async () => {
    const manifest = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { commands: Array<{ command: string }> } };
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const { command } of manifest.contributes.commands) assert.ok(registered.has(command), command);
    assert.deepEqual(
      Object.values(COMMANDS).filter((command) => !registered.has(command)),
      [],
    );
  });

  it('runs a loop in the workspace: two iterations, the tree shows the session, its iterations and its files', async () => {
    const folder = workspaceFolder();
    const end = await codeloops.runs.start(folder, { text: 'Create hello.txt saying hello' });
    assert.ok(end?.kind === 'finished', JSON.stringify(end));
    assert.equal(end.summary.status, 'success');
    assert.equal(end.summary.iterations, 2);
    assert.equal(fs.readFileSync(path.join(folder.uri.fsPath, 'hello.txt'), 'utf8'), 'hello\n');

    const sessions = (await codeloops.sessionsTree.getChildren()) as SessionNode[];
    const node = sessions.find((candidate) => candidate.kind === 'session' && candidate.id === end.summary.session_id);
    assert.ok(node, 'the new session is in the tree');
    assert.equal(node.label, 'Create hello.txt saying hello');
    assert.equal(node.icon.id, 'pass-filled');
    const item = codeloops.sessionsTree.getTreeItem(node);
    assert.equal(item.contextValue, 'session');
    const iterations = (await codeloops.sessionsTree.getChildren(node)) as IterationNode[];
    assert.deepEqual(
      iterations.map((iteration) => iteration.description.split(' · ')[0]),
      ['CONTINUE', 'DONE'],
    );
    const files = (await codeloops.sessionsTree.getChildren(iterations[1])) as FileNode[];
    assert.deepEqual(
      files.map((file) => file.file.path),
      ['hello.txt'],
    );
    const fileItem = codeloops.sessionsTree.getTreeItem(files[0]!);
    assert.equal(fileItem.command?.command, COMMANDS.showFileDiff);
  });

  it('opens a changed file in the diff editor between the snapshots', async () => {
    const store = new SessionStore(sessionsDir());
    const [latest] = await store.list();
    assert.ok(latest);
    const sessions = (await codeloops.sessionsTree.getChildren()) as TreeNode[];
    const node = sessions.find((candidate): candidate is SessionNode => candidate.kind === 'session' && candidate.id === latest.id)!;
    const [, second] = (await codeloops.sessionsTree.getChildren(node)) as IterationNode[];
    const [file] = (await codeloops.sessionsTree.getChildren(second)) as FileNode[];
    await vscode.commands.executeCommand(COMMANDS.showFileDiff, file);
    const tab = await waitFor('a diff tab', () => diffTabs().find((input) => input.modified.scheme === URI_SCHEMES.snapshot));
    const left = await vscode.workspace.openTextDocument(tab.original);
    const right = await vscode.workspace.openTextDocument(tab.modified);
    assert.equal(left.getText(), 'helo\n', 'before iteration 2');
    assert.equal(right.getText(), 'hello\n', 'after iteration 2');
    diffFile = file;
  });

  it('opens all of an iteration’s changes in the multi-file diff editor', async () => {
    const [latest] = await new SessionStore(sessionsDir()).list();
    const sessions = (await codeloops.sessionsTree.getChildren()) as TreeNode[];
    const node = sessions.find((candidate): candidate is SessionNode => candidate.kind === 'session' && candidate.id === latest!.id)!;
    const [first] = (await codeloops.sessionsTree.getChildren(node)) as IterationNode[];
    await vscode.commands.executeCommand(COMMANDS.showIterationChanges, first);
    await waitFor('the multi-file diff tab', () =>
      vscode.window.tabGroups.all.flatMap((group) => group.tabs).find((tab) => tab.label.includes('Codeloops: iteration 1')),
    );
  });

  it('opens the session viewer as a webview panel', async () => {
    const [latest] = await new SessionStore(sessionsDir()).list();
    await vscode.commands.executeCommand(COMMANDS.openViewer, latest!.id);
    await waitFor('the viewer tab', () =>
      vscode.window.tabGroups.all
        .flatMap((group) => group.tabs)
        .find((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.endsWith('codeloops.viewer')),
    );
  });

  it('interrupts a running loop: the session ends interrupted', async () => {
    const folder = workspaceFolder();
    fs.writeFileSync(
      path.join(process.env.SCRIPTED_AGENT_DIR!, 'script.json'),
      JSON.stringify({ actor: [[{ print: 'a long job' }, { sleep: 120_000 }]], critic: [[{ print: 'TASK COMPLETE' }]] }),
    );
    for (const role of ['actor', 'critic']) fs.rmSync(path.join(process.env.SCRIPTED_AGENT_DIR!, `${role}.count`), { force: true });
    const running = codeloops.runs.start(folder, { text: 'A slow task' });
    await waitFor('the actor to start', () => codeloops.runs.runningLoops().find((loop) => loop.phase === 'actor'));
    const second = await codeloops.runs.start(folder, { text: 'A second loop in the same folder' });
    assert.equal(second, undefined, 'one loop per folder');
    // Reviewing while a loop runs does not push the editor the user is in out of the way.
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const readme = await vscode.workspace.openTextDocument(path.join(folder.uri.fsPath, 'README.md'));
    await vscode.window.showTextDocument(readme);
    await vscode.commands.executeCommand(COMMANDS.showFileDiff, diffFile);
    await waitFor('a diff tab', () => diffTabs().find((input) => input.modified.scheme === URI_SCHEMES.snapshot));
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), readme.uri.toString(), 'the user’s editor stays active and focused');
    await vscode.commands.executeCommand(COMMANDS.interrupt, folder);
    const end = await running;
    assert.ok(end?.kind === 'finished' && end.summary.status === 'interrupted', JSON.stringify(end));
    assert.equal(codeloops.runs.runningLoops().length, 0);
  });

  it('resumes the interrupted session from the tree, then rolls its iteration back after a confirmation that lists the files, and undoes it', async () => {
    const folder = workspaceFolder();
    const store = new SessionStore(sessionsDir());
    const [interrupted] = await store.list();
    assert.equal(interrupted?.outcome, 'interrupted');
    const sessions = (await codeloops.sessionsTree.getChildren()) as TreeNode[];
    const node = sessions.find((candidate): candidate is SessionNode => candidate.kind === 'session' && candidate.id === interrupted!.id)!;
    assert.equal(codeloops.sessionsTree.getTreeItem(node).contextValue, 'session.resumable', 'the tree offers Resume');

    fs.writeFileSync(
      path.join(process.env.SCRIPTED_AGENT_DIR!, 'script.json'),
      JSON.stringify({ actor: [[{ write: { path: 'resumed.txt', content: 'carried on\n' } }]], critic: [[{ print: 'TASK COMPLETE' }]] }),
    );
    for (const role of ['actor', 'critic']) fs.rmSync(path.join(process.env.SCRIPTED_AGENT_DIR!, `${role}.count`), { force: true });
    await vscode.commands.executeCommand(COMMANDS.resumeSession, node);
    const [resumed] = await store.list();
    assert.ok(resumed && resumed.id !== interrupted!.id, 'a new session carries the ended one on');
    assert.equal(resumed.outcome, 'success');
    const loaded = await store.load(resumed.id);
    assert.equal(loaded.start.resumed_from, interrupted!.id);
    assert.equal(loaded.start.prompt, 'A slow task');
    const resumedFile = path.join(folder.uri.fsPath, 'resumed.txt');
    assert.equal(fs.readFileSync(resumedFile, 'utf8'), 'carried on\n');

    const asked: string[] = [];
    const confirm = async (question: string, detail: string, action: string) => {
      asked.push(`${question}\n${detail}`);
      return action;
    };
    const rolled = await rollBackIteration(
      { ...codeloops.timeTravel, window: { ...codeloops.timeTravel.window, confirm } },
      resumed.id,
      loaded.iterations[0]!.iteration_number,
    );
    assert.equal(rolled?.result, 'rolled_back', rolled?.message);
    assert.match(asked[0]!, /^Roll back to before iteration 1\?\nRemove \(1\):\n {2}resumed\.txt/);
    assert.ok(!fs.existsSync(resumedFile), 'the file the resumed iteration made is gone');
    const undone = await undoLastRollback({ ...codeloops.timeTravel, window: { ...codeloops.timeTravel.window, confirm } }, resumed.id);
    assert.equal(undone?.result, 'undone', undone?.message);
    assert.match(asked[1]!, /^Undo the last rollback\?\nRestore \(1\):\n {2}resumed\.txt/);
    assert.equal(fs.readFileSync(resumedFile, 'utf8'), 'carried on\n');
    fs.rmSync(resumedFile);
  });

  it('passes the editor’s settings to the runner, under the project’s codeloops.toml', async () => {
    const folder = workspaceFolder();
    fs.writeFileSync(
      path.join(process.env.SCRIPTED_AGENT_DIR!, 'script.json'),
      JSON.stringify({ actor: [[{ print: 'tried' }]], critic: [[{ print: '<decision>{"type":"continue","feedback":"more"}</decision>' }]] }),
    );
    const config = vscode.workspace.getConfiguration('codeloops', folder.uri);
    await config.update('maxIterations', 1, vscode.ConfigurationTarget.Workspace);
    await config.update('critic.model', 'model-from-settings', vscode.ConfigurationTarget.Workspace);
    try {
      const end = await codeloops.runs.start(folder, { text: 'Settings apply' });
      assert.ok(end?.kind === 'finished');
      assert.equal(end.summary.status, 'max_iterations_reached');
      const session = await new SessionStore(sessionsDir()).load(end.summary.session_id);
      assert.equal(session.start.max_iterations, 1);
      assert.equal(session.start.critic_model, 'model-from-settings');
    } finally {
      await config.update('maxIterations', undefined, vscode.ConfigurationTarget.Workspace);
      await config.update('critic.model', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });

  it('runs the checks and budgets from the editor’s settings: a failing check refuses DONE until it passes', async () => {
    const folder = workspaceFolder();
    fs.writeFileSync(
      path.join(process.env.SCRIPTED_AGENT_DIR!, 'script.json'),
      JSON.stringify({
        actor: [[{ write: { path: 'feature.txt', content: 'half\n' } }], [{ write: { path: 'fixed.txt', content: 'fixed\n' } }]],
        critic: [[{ print: '<decision>{"type":"done","summary":"complete","confidence":0.9}</decision>' }]],
      }),
    );
    // The scripted agent counts its calls across runs: this script starts from its first step.
    for (const role of ['actor', 'critic']) fs.rmSync(path.join(process.env.SCRIPTED_AGENT_DIR!, `${role}.count`), { force: true });
    const config = vscode.workspace.getConfiguration('codeloops', folder.uri);
    await config.update(
      'checks',
      [{ name: 'fixed', run: 'test -f fixed.txt || { echo "fixed.txt is missing"; exit 1; }' }],
      vscode.ConfigurationTarget.Workspace,
    );
    await config.update('maxCostUsd', 25, vscode.ConfigurationTarget.Workspace);
    await config.update('stallAfter', 0, vscode.ConfigurationTarget.Workspace);
    try {
      const end = await codeloops.runs.start(folder, { text: 'Checks from settings' });
      assert.ok(end?.kind === 'finished');
      assert.equal(end.summary.status, 'success');
      assert.equal(end.summary.iterations, 2);
      const session = await new SessionStore(sessionsDir()).load(end.summary.session_id);
      const [first] = session.iterations;
      assert.equal(first!.critic_decision, 'CONTINUE');
      assert.equal((first as unknown as Record<string, unknown>).critic_verdict, 'DONE');
      assert.match(first!.feedback ?? '', /fixed\.txt is missing/);
      const events = fs
        .readFileSync(path.join(sidecarDir(end.summary.session_id), EVENTS_FILE), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { type: string; passed?: boolean; guards?: { max_cost_usd: number | null; stall_after: number } });
      assert.deepEqual(
        events.filter((event) => event.type === 'check_finished').map((event) => event.passed),
        [false, true],
      );
      const started = events.find((event) => event.type === 'run_started');
      assert.equal(started?.guards?.max_cost_usd, 25);
      assert.equal(started?.guards?.stall_after, 0);
    } finally {
      fs.rmSync(path.join(folder.uri.fsPath, 'fixed.txt'), { force: true });
      fs.rmSync(path.join(folder.uri.fsPath, 'feature.txt'), { force: true });
      for (const key of ['checks', 'maxCostUsd', 'stallAfter']) await config.update(key, undefined, vscode.ConfigurationTarget.Workspace);
    }
  });

  it('takes VS Code’s workspace trust as trust in the project’s codeloops.toml, and still refuses arguments that widen an agent', async () => {
    const folder = workspaceFolder();
    assert.equal(vscode.workspace.isTrusted, true, 'the suite’s workspace is trusted');
    fs.writeFileSync(
      path.join(process.env.SCRIPTED_AGENT_DIR!, 'script.json'),
      JSON.stringify({ actor: [[{ print: 'done' }]], critic: [[{ print: '<decision>{"type":"done","summary":"ok","confidence":0.9}</decision>' }]] }),
    );
    for (const role of ['actor', 'critic']) fs.rmSync(path.join(process.env.SCRIPTED_AGENT_DIR!, `${role}.count`), { force: true });
    const toml = path.join(folder.uri.fsPath, 'codeloops.toml');
    fs.writeFileSync(toml, '[[checks]]\nname = "from the project"\nrun = "echo the project file ran"\n');
    try {
      const end = await codeloops.runs.start(folder, { text: 'A project file in a trusted workspace' });
      assert.ok(end?.kind === 'finished' && end.summary.status === 'success', JSON.stringify(end));
      const checks = fs
        .readFileSync(path.join(sidecarDir(end.summary.session_id), EVENTS_FILE), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { type: string; name?: string; passed?: boolean })
        .filter((event) => event.type === 'check_finished');
      assert.deepEqual(
        checks.map((check) => [check.name, check.passed]),
        [['from the project', true]],
        'the project’s check ran: trusting the workspace trusted the file',
      );
      fs.writeFileSync(toml, '[agents.claude]\nargs = ["--dangerously-skip-permissions"]\n');
      const refused = await codeloops.runs.start(folder, { text: 'A permission argument in a trusted workspace' });
      assert.ok(refused?.kind === 'refused' && refused.code === 'config_invalid', JSON.stringify(refused));
      assert.deepEqual([refused.details.key, refused.details.argument], ['[agents.claude] args', '--dangerously-skip-permissions']);
    } finally {
      fs.rmSync(toml, { force: true });
    }
  });

  it('shows a session written by the CLI in a terminal without a refresh', async () => {
    const store = new SessionStore(sessionsDir());
    const id = '2030-01-01T00-00-00Z_abcdef';
    fs.writeFileSync(
      store.filePathOf(id),
      JSON.stringify({
        type: 'session_start',
        timestamp: '2030-01-01T00:00:00Z',
        prompt: 'Written by a terminal',
        working_dir: '/elsewhere',
        actor_agent: 'Claude Code',
        critic_agent: 'Claude Code',
        actor_model: null,
        critic_model: null,
        max_iterations: 3,
      }) + '\n',
    );
    const seen = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 10_000);
      const subscription = codeloops.sessionsTree.onDidChangeTreeData(async () => {
        const nodes = await codeloops.sessionsTree.getChildren();
        if (nodes.some((node) => node.kind === 'session' && node.id === id)) {
          clearTimeout(timer);
          subscription.dispose();
          resolve(true);
        }
      });
    });
    assert.ok(seen, 'the tree refreshed by itself');
  });

  it('has the sessions view in its own activity bar container', async () => {
    await vscode.commands.executeCommand(`${VIEWS.sessions}.focus`);
  });
  // Last: it deletes the snapshots the tests above look at.
  it('falls back to the recorded diff when the snapshots are gone', async () => {
    const [latest] = await new SessionStore(sessionsDir()).list({ search: 'Create hello.txt saying hello' });
    const sessions = (await codeloops.sessionsTree.getChildren()) as TreeNode[];
    const node = sessions.find((candidate): candidate is SessionNode => candidate.kind === 'session' && candidate.id === latest!.id)!;
    const [, second] = (await codeloops.sessionsTree.getChildren(node)) as IterationNode[];
    const [file] = (await codeloops.sessionsTree.getChildren(second)) as FileNode[];
    const folder = workspaceFolder().uri.fsPath;
    const refs = execFileSync('git', ['for-each-ref', '--format=%(refname)', `refs/codeloops/${latest!.id}/`], { cwd: folder, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    assert.ok(refs.length >= 4);
    // As after a fresh clone: the session is there, its snapshots are not.
    for (const ref of refs) execFileSync('git', ['update-ref', '-d', ref], { cwd: folder });
    await vscode.commands.executeCommand(COMMANDS.showFileDiff, file);
    const editor = await waitFor('the recorded diff', () =>
      vscode.window.visibleTextEditors.find((candidate) => candidate.document.uri.scheme === URI_SCHEMES.recordedDiff),
    );
    assert.equal(editor.document.languageId, 'diff');
    assert.match(editor.document.getText(), /-helo\n\+hello/);
  });
});
