import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import type { CodeloopsApi } from '../../../src/extension/extension.js';
import { COMMANDS, TOOL_NAMES, URI_SCHEMES, VIEWS } from '../../../src/extension/ids.js';
import type { FileNode, GroupNode, IterationNode, SessionNode, TreeNode } from '../../../src/extension/sessionsTree/sessionsTreeModel.js';
import { EVENTS_FILE, sessionsDir, sidecarDirOf } from '../../../src/sessionFormat/sessionFiles.js';
import { SessionStore } from '../../../src/sessions/sessionStore.js';
import { rejectHunkCommand } from '../../../src/extension/review/reviewCommands.js';
import { rollBackIteration, undoLastRollback } from '../../../src/extension/timeTravel/timeTravelCommands.js';
import { applyCandidateSession, undoApplySession } from '../../../src/extension/candidates/applyCommands.js';

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

/** The scripted agents follow this script from its first step on (test/fixtures/agents/scriptedAgent.mjs). */
function scriptAgents(script: object): void {
  const dir = process.env.SCRIPTED_AGENT_DIR!;
  fs.writeFileSync(path.join(dir, 'script.json'), JSON.stringify(script));
  // Every role's count and claimed calls, candidates' too (`<label>-actor.count`, `actor-3.claim`).
  for (const name of fs.readdirSync(dir).filter((file) => file.endsWith('.count') || file.endsWith('.claim'))) fs.rmSync(path.join(dir, name), { force: true });
}

/** The two-iteration loop several tests look at: hello.txt written as "helo", then fixed. */
const HELLO_SCRIPT = {
  actor: [
    [{ write: { path: 'hello.txt', content: 'helo\n' } }, { print: 'Wrote hello.txt' }],
    [{ write: { path: 'hello.txt', content: 'hello\n' } }, { print: 'Fixed it' }],
  ],
  critic: [
    [
      {
        print:
          '<decision>{"type":"continue","feedback":"hello.txt says helo","remaining_issues":["typo"],"findings":[{"file":"hello.txt","line":1,"severity":"error","message":"helo is a typo"}]}</decision>',
      },
    ],
    [{ print: '<decision>{"type":"done","summary":"hello.txt says hello","confidence":0.9}</decision>' }],
  ],
};

/**
 * Every test makes what it looks at itself (or shares a loop another test made, by
 * its id, never "the latest session"), so that the tests pass alone and in any order
 * (`node test/run.mjs editor --reverse` runs them backwards).
 */
describe('Codeloops in a real VS Code', () => {
  let codeloops: CodeloopsApi;
  let helloLoop: Promise<string> | undefined;

  before(async () => {
    codeloops = await api();
  });

  /** Runs a loop and returns its session id. */
  async function runLoop(text: string, script: object): Promise<string> {
    scriptAgents(script);
    const end = await codeloops.runs.start(workspaceFolder(), { text });
    assert.ok(end?.kind === 'finished', JSON.stringify(end));
    return end.summary.session_id;
  }

  /** The hello loop's session, run once for every test that looks at it. */
  function helloSession(): Promise<string> {
    helloLoop ??= runLoop('Create hello.txt saying hello', HELLO_SCRIPT);
    return helloLoop;
  }

  async function sessionNode(id: string): Promise<SessionNode> {
    const sessions = (await codeloops.sessionsTree.getChildren()) as TreeNode[];
    const node = sessions.find((candidate): candidate is SessionNode => candidate.kind === 'session' && candidate.id === id);
    assert.ok(node, `session ${id} is in the tree`);
    return node;
  }

  /** An iteration's changed files, as the tree shows them. */
  async function filesOf(id: string, iteration: number): Promise<FileNode[]> {
    const iterations = (await codeloops.sessionsTree.getChildren(await sessionNode(id))) as IterationNode[];
    return (await codeloops.sessionsTree.getChildren(iterations[iteration - 1])) as FileNode[];
  }

  it('registers every command of its manifest', async () => {
    const manifest = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { commands: Array<{ command: string }> } };
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const { command } of manifest.contributes.commands) assert.ok(registered.has(command), command);
    assert.deepEqual(
      Object.values(COMMANDS).filter((command) => !registered.has(command)),
      [],
    );
  });

  it('offers its language model tools to VS Code’s agents, and answers them through VS Code: a session read as a chat agent reads it', async () => {
    // Registered at activation (the participant and the MCP server definition provider too: VS Code refuses an undeclared one, and activation would fail).
    const tools = vscode.lm.tools.filter((tool) => tool.name.startsWith('codeloops_'));
    assert.deepEqual(tools.map((tool) => tool.name).sort(), Object.values(TOOL_NAMES).sort());
    assert.deepEqual(
      tools
        .filter((tool) => tool.tags.includes('read-only'))
        .map((tool) => tool.name)
        .sort(),
      [TOOL_NAMES.getSession, TOOL_NAMES.listSessions].sort(),
    );
    assert.deepEqual((tools.find((tool) => tool.name === TOOL_NAMES.runLoop)!.inputSchema as { required: string[] }).required, ['task']);
    // Invoked as an agent invokes them: through VS Code, which loads dist/chat.js on this first use.
    const id = await helloSession();
    const answer = async (name: string, input: object) => {
      const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined });
      return JSON.parse((result.content[0] as vscode.LanguageModelTextPart).value);
    };
    const session = await answer(TOOL_NAMES.getSession, { sessionId: id });
    assert.equal(session.status, 'ended', "the one session view for a model, as the MCP server's get_session says it");
    assert.equal(session.outcome, 'success');
    assert.deepEqual(
      session.iterations.map((iteration: { decision: string }) => iteration.decision),
      ['CONTINUE', 'DONE'],
    );
    const listed = await answer(TOOL_NAMES.listSessions, { limit: 50 });
    assert.ok(listed.sessions.some((entry: { id: string }) => entry.id === id));
    assert.equal((await answer(TOOL_NAMES.getSession, { sessionId: 'no-such-session' })).failure.code, 'session_not_found', 'the one failure envelope');
  });

  it('runs a loop in the workspace: two iterations, the tree shows the session, its iterations and its files', async () => {
    const folder = workspaceFolder();
    const id = await helloSession();
    const summary = await new SessionStore(sessionsDir()).summary(id);
    assert.equal(summary?.outcome, 'success');
    assert.equal(summary?.iterations, 2);
    assert.equal(fs.readFileSync(path.join(folder.uri.fsPath, 'hello.txt'), 'utf8'), 'hello\n');

    const node = await sessionNode(id);
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
    const [file] = await filesOf(await helloSession(), 2);
    await vscode.commands.executeCommand(COMMANDS.showFileDiff, file);
    const tab = await waitFor('a diff tab', () => diffTabs().find((input) => input.modified.scheme === URI_SCHEMES.snapshot));
    const left = await vscode.workspace.openTextDocument(tab.original);
    const right = await vscode.workspace.openTextDocument(tab.modified);
    assert.equal(left.getText(), 'helo\n', 'before iteration 2');
    assert.equal(right.getText(), 'hello\n', 'after iteration 2');
  });

  it('opens all of an iteration’s changes in the multi-file diff editor', async () => {
    const [first] = (await codeloops.sessionsTree.getChildren(await sessionNode(await helloSession()))) as IterationNode[];
    await vscode.commands.executeCommand(COMMANDS.showIterationChanges, first);
    await waitFor('the multi-file diff tab', () =>
      vscode.window.tabGroups.all.flatMap((group) => group.tabs).find((tab) => tab.label.includes('Codeloops: iteration 1')),
    );
  });

  it('opens the session viewer as a webview panel', async () => {
    await vscode.commands.executeCommand(COMMANDS.openViewer, await helloSession());
    await waitFor('the viewer tab', () =>
      vscode.window.tabGroups.all
        .flatMap((group) => group.tabs)
        .find((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.endsWith('codeloops.viewer')),
    );
  });

  /** Starts a loop whose actor works until it is interrupted; returns once the actor is at work, `running` settles when the loop ends. */
  async function slowLoop(): Promise<{ running: Promise<Awaited<ReturnType<CodeloopsApi['runs']['start']>>> }> {
    scriptAgents({ actor: [[{ print: 'a long job' }, { sleep: 120_000 }]], critic: [[{ print: 'TASK COMPLETE' }]] });
    const running = codeloops.runs.start(workspaceFolder(), { text: 'A slow task' });
    await waitFor('the actor to start', () => codeloops.runs.runningLoops().find((loop) => loop.progress.stage === 'actor'));
    return { running };
  }

  it('interrupts a running loop: the session ends interrupted', async () => {
    const folder = workspaceFolder();
    const [diffFile] = await filesOf(await helloSession(), 2);
    const { running } = await slowLoop();
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

  it('resumes an interrupted session from the tree, then rolls its iteration back after a confirmation that lists the files, and undoes it', async () => {
    const folder = workspaceFolder();
    const store = new SessionStore(sessionsDir());
    const { running } = await slowLoop();
    await vscode.commands.executeCommand(COMMANDS.interrupt, folder);
    const stopped = await running;
    assert.ok(stopped?.kind === 'finished' && stopped.summary.status === 'interrupted', JSON.stringify(stopped));
    const interrupted = stopped.summary.session_id;
    const node = await sessionNode(interrupted);
    assert.equal(codeloops.sessionsTree.getTreeItem(node).contextValue, 'session.resumable', 'the tree offers Resume');

    scriptAgents({ actor: [[{ write: { path: 'resumed.txt', content: 'carried on\n' } }]], critic: [[{ print: 'TASK COMPLETE' }]] });
    const before = new Set(await store.listIds());
    await vscode.commands.executeCommand(COMMANDS.resumeSession, node);
    const resumed = (await store.list()).find((summary) => !before.has(summary.id));
    assert.ok(resumed, 'a new session carries the ended one on');
    assert.equal(resumed.outcome, 'success');
    const loaded = await store.load(resumed.id);
    assert.equal(loaded.start.resumed_from, interrupted);
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

  it('runs two candidates: grouped under their task and live in the tree, compared on their page, one applied after a confirmation', async () => {
    const folder = workspaceFolder();
    const task = 'Two candidates write a file';
    scriptAgents({
      critic: [[{ print: '<decision>{"type":"ranking","ranking":["B","A"],"reasoning":"B is shorter"}</decision>' }]],
      candidates: {
        'command#1': {
          actor: [[{ write: { path: 'candidate.txt', content: 'the first candidate\n' } }, { sleep: 1500 }]],
          critic: [[{ print: '<decision>{"type":"done","summary":"one","confidence":0.7}</decision>' }]],
        },
        'command#2': {
          actor: [[{ write: { path: 'candidate.txt', content: 'two\n' } }, { sleep: 1500 }]],
          critic: [[{ print: '<decision>{"type":"done","summary":"two","confidence":0.9}</decision>' }]],
        },
      },
    });
    const running = codeloops.candidateRuns.start(folder, { prompt: task, candidates: 'command', times: 2 });
    const groupOf = async () =>
      ((await codeloops.sessionsTree.getChildren()) as TreeNode[]).find((node): node is GroupNode => node.kind === 'group' && node.label === task);
    // Live: one entry for the task, both candidates under it, both running.
    const live = await waitFor('the group with both candidates running', async () => {
      const group = await groupOf();
      return group && group.candidates.length === 2 && group.candidates.every((candidate) => candidate.contextValue === 'session.running') ? group : undefined;
    });
    assert.match(live.description, /2 candidates · 0 of 2 done/);
    assert.equal(codeloops.sessionsTree.getTreeItem(live).contextValue, 'group.running');
    const topLevel = (await codeloops.sessionsTree.getChildren()) as TreeNode[];
    assert.ok(
      !topLevel.some((node) => node.kind === 'session' && live.candidates.some((candidate) => candidate.id === node.id)),
      'the candidates are not listed twice',
    );
    // The comparison page opened as the group started.
    await waitFor('the comparison tab', () =>
      vscode.window.tabGroups.all
        .flatMap((group) => group.tabs)
        .find((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.endsWith('codeloops.comparison')),
    );
    const end = await running;
    assert.ok(end?.kind === 'finished' && end.status === 'finished', JSON.stringify(end));
    assert.deepEqual(end.ranking, ['command#2', 'command#1']);
    const finished = await waitFor('the group ranked', async () => {
      const group = await groupOf();
      return group?.contextValue === 'group' ? group : undefined;
    });
    assert.deepEqual(
      finished.candidates.map((candidate) => [candidate.label, candidate.contextValue]),
      [
        ['1. command#2', 'session.candidate'],
        ['2. command#1', 'session.candidate'],
      ],
    );
    assert.match(finished.description, /finished · .*best: command#2/);

    // Apply This Candidate, after the modal that lists the file; then its undo.
    const asked: string[] = [];
    const confirm = async (question: string, detail: string, action: string) => {
      asked.push(`${question}\n${detail}`);
      return action;
    };
    const deps = { ...codeloops.apply, window: { ...codeloops.apply.window, confirm } };
    const applied = await applyCandidateSession(deps, finished.candidates[0]!.id);
    assert.equal(applied?.result, 'applied', applied?.message);
    assert.match(asked[0]!, /^Apply command#2 to your working tree\?\nWrite \(1\):\n {2}candidate\.txt/);
    const file = path.join(folder.uri.fsPath, 'candidate.txt');
    assert.equal(fs.readFileSync(file, 'utf8'), 'two\n');
    await waitFor('the tree to say it was applied', async () => ((await groupOf())?.description.includes('command#2 applied') ? true : undefined));
    assert.equal((await undoApplySession(deps, finished.candidates[0]!.id))?.result, 'apply_undone');
    assert.ok(!fs.existsSync(file));
  });

  it('passes the editor’s settings to the runner, under the project’s codeloops.toml', async () => {
    const folder = workspaceFolder();
    scriptAgents({
      actor: [[{ print: 'tried' }]],
      critic: [[{ print: '<decision>{"type":"continue","feedback":"more","findings":[{"severity":"error","message":"more"}]}</decision>' }]],
    });
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
    scriptAgents({
      actor: [[{ write: { path: 'feature.txt', content: 'half\n' } }], [{ write: { path: 'fixed.txt', content: 'fixed\n' } }]],
      critic: [[{ print: '<decision>{"type":"done","summary":"complete","confidence":0.9}</decision>' }]],
    });
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
        .readFileSync(path.join(sidecarDirOf(end.summary.session_id), EVENTS_FILE), 'utf8')
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
      JSON.stringify({
        // A loop that changes nothing is not done: the actor makes its change (a file no other test reads).
        actor: [[{ write: { path: 'project-check.txt', content: 'made under a project file\n' } }]],
        critic: [[{ print: '<decision>{"type":"done","summary":"ok","confidence":0.9}</decision>' }]],
      }),
    );
    for (const role of ['actor', 'critic']) fs.rmSync(path.join(process.env.SCRIPTED_AGENT_DIR!, `${role}.count`), { force: true });
    const toml = path.join(folder.uri.fsPath, 'codeloops.toml');
    fs.writeFileSync(toml, '[[checks]]\nname = "from the project"\nrun = "echo the project file ran"\n');
    try {
      const end = await codeloops.runs.start(folder, { text: 'A project file in a trusted workspace' });
      assert.ok(end?.kind === 'finished' && end.summary.status === 'success', JSON.stringify(end));
      const checks = fs
        .readFileSync(path.join(sidecarDirOf(end.summary.session_id), EVENTS_FILE), 'utf8')
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
  /** Twenty numbered lines, some changed. */
  const numbered = (change: Record<number, string> = {}) =>
    Array.from({ length: 20 }, (_, index) => change[index + 1] ?? `line ${index + 1}`).join('\n') + '\n';

  it('shows the critic’s findings as review comments on the iteration’s diff and on the file, at their lines', async () => {
    const folder = workspaceFolder().uri.fsPath;
    fs.writeFileSync(path.join(folder, 'review.txt'), numbered());
    const id = await runLoop('Review the findings', {
      actor: [[{ write: { path: 'review.txt', content: numbered({ 3: 'CHANGED 3' }) } }], [{ print: 'done' }]],
      critic: [
        [
          {
            print:
              '<decision>' +
              JSON.stringify({
                type: 'continue',
                feedback: 'Line 3 shouts.',
                findings: [
                  { file: 'review.txt', line: 3, end_line: 4, severity: 'error', message: 'CHANGED 3 should be lower case' },
                  { file: 'nowhere.txt', line: 1, severity: 'info', message: 'a general remark' },
                ],
              }) +
              '</decision>',
          },
        ],
        [{ print: '<decision>{"type":"done","summary":"ok","confidence":0.8}</decision>' }],
      ],
    });
    const [file] = await filesOf(id, 1);
    await vscode.commands.executeCommand(COMMANDS.showFileDiff, file);
    const threads = await waitFor('the review threads', () => {
      const shown = codeloops.reviewThreads.threadsOf(id);
      return shown.length >= 2 ? shown : undefined;
    });
    const described = threads.map((thread) => ({
      scheme: thread.uri.scheme,
      path: thread.uri.path,
      start: thread.range?.start.line,
      end: thread.range?.end.line,
      label: thread.label,
      body: String(thread.comments[0]?.body),
      author: thread.comments[0]?.author.name,
    }));
    const expected = { start: 2, end: 3, label: 'F1.1 · error', body: 'CHANGED 3 should be lower case', author: 'Codeloops critic' };
    assert.deepEqual(
      described.find((thread) => thread.scheme === URI_SCHEMES.snapshot),
      { scheme: URI_SCHEMES.snapshot, path: '/review.txt', ...expected },
      'on the post side of the diff',
    );
    assert.deepEqual(
      described.find((thread) => thread.scheme === 'file'),
      { scheme: 'file', path: vscode.Uri.file(path.join(folder, 'review.txt')).path, ...expected },
      'and on the file while it reads so',
    );
    assert.equal(described.filter((thread) => thread.label?.startsWith('F1.2')).length, 0, 'a finding that points nowhere is not placed');
    // Once the file reads otherwise, the finding stays on the diff only.
    fs.writeFileSync(path.join(folder, 'review.txt'), numbered({ 3: 'edited by the user' }));
    await codeloops.reviewThreads.show(id);
    assert.deepEqual(
      codeloops.reviewThreads.threadsOf(id).map((thread) => thread.uri.scheme),
      [URI_SCHEMES.snapshot],
    );
    fs.rmSync(path.join(folder, 'review.txt'));
  });

  it('rejects the hunk under the cursor in the diff editor, with the reason typed, and the file changes accordingly', async () => {
    const folder = workspaceFolder().uri.fsPath;
    fs.writeFileSync(path.join(folder, 'hunks.txt'), numbered());
    const id = await runLoop('Two hunks', {
      actor: [[{ write: { path: 'hunks.txt', content: numbered({ 2: 'two', 18: 'eighteen' }) } }]],
      critic: [[{ print: '<decision>{"type":"done","summary":"ok","confidence":0.8}</decision>' }]],
    });
    const [file] = await filesOf(id, 1);
    await vscode.commands.executeCommand(COMMANDS.showFileDiff, file);
    const tab = await waitFor('the diff', () =>
      diffTabs().find((input) => input.modified.scheme === URI_SCHEMES.snapshot && input.modified.path === '/hunks.txt'),
    );
    const modified = await waitFor('the modified side', () =>
      vscode.window.visibleTextEditors.find((editor) => editor.document.uri.toString() === tab.modified.toString()),
    );
    // The cursor on line 18, in the second hunk, as a user puts it before choosing "Reject This Change".
    const ref = await codeloops.hunkLenses.hunkAt(modified.document.uri, 18);
    assert.deepEqual(ref, { sessionId: id, iteration: 1, hunk: 2 });
    const lenses = await codeloops.hunkLenses.provideCodeLenses(modified.document);
    assert.deepEqual(
      lenses.map((lens) => [lens.range.start.line, lens.command?.title]),
      [
        [0, '$(discard) Reject This Change (hunk 1)'],
        [14, '$(discard) Reject This Change (hunk 2)'],
      ],
    );
    const asked: string[] = [];
    const outcome = await rejectHunkCommand(
      { ...codeloops.review, window: { ...codeloops.review.window, input: async (prompt) => (asked.push(prompt), 'line 18 is public') } },
      ref!.sessionId,
      ref!.iteration,
      ref!.hunk,
    );
    assert.equal(outcome?.result, 'rejected', outcome?.message);
    assert.match(asked[0]!, /^Reject hunk 2 of iteration 1/);
    assert.equal(fs.readFileSync(path.join(folder, 'hunks.txt'), 'utf8'), numbered({ 2: 'two' }));
    const review = await new SessionStore(sessionsDir()).load(id).then(() => codeloops.library.view(id));
    assert.equal(review.review.rejections[0]?.reason, 'line 18 is public', 'the viewer shows it');
    fs.rmSync(path.join(folder, 'hunks.txt'));
  });

  it('waits for the review after an iteration that goes on, when the workspace says so, and goes on when told', async () => {
    const folder = workspaceFolder();
    await vscode.commands.executeCommand(COMMANDS.toggleReviewPause);
    try {
      assert.equal(vscode.workspace.getConfiguration('codeloops', folder.uri).get('review'), 'pause');
      scriptAgents({
        actor: [[{ write: { path: 'paused.txt', content: 'one\n' } }], [{ write: { path: 'paused.txt', content: 'two\n' } }]],
        critic: [
          [{ print: '<decision>{"type":"continue","feedback":"again","findings":[{"severity":"error","message":"again"}]}</decision>' }],
          [{ print: 'TASK COMPLETE' }],
        ],
      });
      const running = codeloops.runs.start(folder, { text: 'Pause for review' });
      const loop = await waitFor('the loop to wait for review', () => codeloops.runs.runningLoops().find((candidate) => candidate.progress.pausedAfter === 1));
      assert.equal(fs.readFileSync(path.join(folder.uri.fsPath, 'paused.txt'), 'utf8'), 'one\n', 'the second iteration waits');
      await vscode.commands.executeCommand(COMMANDS.continueLoop, loop.sessionId);
      const end = await running;
      assert.ok(end?.kind === 'finished' && end.summary.status === 'success', JSON.stringify(end));
      assert.equal(fs.readFileSync(path.join(folder.uri.fsPath, 'paused.txt'), 'utf8'), 'two\n');
    } finally {
      await vscode.commands.executeCommand(COMMANDS.toggleReviewPause);
      assert.equal(vscode.workspace.getConfiguration('codeloops', folder.uri).get('review'), 'off');
      fs.rmSync(path.join(folder.uri.fsPath, 'paused.txt'), { force: true });
    }
  });

  it('falls back to the recorded diff when the snapshots are gone', async () => {
    // A loop of its own: this test deletes its snapshots.
    const id = await runLoop('Create hello.txt, then delete its snapshots', HELLO_SCRIPT);
    const [file] = await filesOf(id, 2);
    const folder = workspaceFolder().uri.fsPath;
    const refs = execFileSync('git', ['for-each-ref', '--format=%(refname)', `refs/codeloops/${id}/`], { cwd: folder, encoding: 'utf8' })
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
