import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { queueFileSchema, type QueueTask } from '../../src/sessionFormat/queueRecords.js';
import { runCli, startCli, type CliOptions, type CliRun } from '../support/cliProcess.js';
import { launchChromium } from '../support/codeServer.js';
import { isRunning, waitUntilGone } from '../support/processes.js';
import { queueSetup } from '../support/queueAgents.js';
import type { ScriptedAgent } from '../support/scriptedAgent.js';
import { git, removeTempDirs, tempDir, treeOf, writeFile } from '../support/testEnvironment.js';

/** Everything of the user's that a queue must leave alone. */
function userState(repo: string) {
  return {
    head: git(repo, 'rev-parse', 'HEAD').trim(),
    branch: git(repo, 'symbolic-ref', 'HEAD').trim(),
    index: fs.readFileSync(path.join(repo, '.git', 'index')).toString('base64'),
    status: git(repo, 'status', '--porcelain=v1', '--untracked-files=all', '--ignored'),
    stash: git(repo, 'stash', 'list', '--format=%H %s'),
    files: treeOf(repo),
  };
}

/** A user mid-work: a change staged, another unstaged, an untracked file, an ignored one, a stash. */
function userAtWork(repo: string): void {
  writeFile(repo, 'README.md', '# project\nstashed line\n');
  git(repo, 'stash', 'push', '-q', '-m', 'my stash');
  writeFile(repo, 'staged.txt', 'staged\n');
  git(repo, 'add', 'staged.txt');
  writeFile(repo, 'README.md', '# project\nunstaged edit\n');
  writeFile(repo, 'notes.txt', 'untracked\n');
  writeFile(repo, '.git/info/exclude', 'secret.env\n');
  writeFile(repo, 'secret.env', 'TOKEN=1\n');
}

function queueOf(dataHome: string): { tasks: QueueTask[]; base_commit: string | null } {
  const folder = path.join(dataHome, 'codeloops', 'queues');
  const file = fs.readdirSync(folder).find((name) => name.endsWith('.json'))!;
  return queueFileSchema.parse(JSON.parse(fs.readFileSync(path.join(folder, file), 'utf8')));
}

function actorCallsFor(agent: ScriptedAgent, task: string): number {
  let count = 0;
  for (let call = 1; call <= agent.calls('actor'); call++) if (agent.prompt('actor', call).includes(`TASK-${task}`)) count += 1;
  return count;
}

const commitsOn = (repo: string, branch: string, base: string) => git(repo, 'log', '--format=%an <%ae>|%s', `${base}..${branch}`).trim();

async function addTasks(repo: string, env: Record<string, string>, prompts: readonly string[], ...flags: string[]): Promise<void> {
  for (const prompt of prompts) {
    const added = await runCli(['queue', 'add', '-p', prompt, ...flags], { cwd: repo, env });
    assert.equal(added.code, 0, added.stderr);
  }
}

interface MergeOutput {
  status?: string;
  files?: string[];
  error?: { code: string; message: string; details: Record<string, unknown> };
}

async function queueMerge(repo: string, env: Record<string, string>, ...args: string[]): Promise<{ code: number | null; json: MergeOutput }> {
  const result = await runCli(['queue', 'merge', ...args, '--json'], { cwd: repo, env });
  return { code: result.code, json: JSON.parse(result.stdout) as MergeOutput };
}

/**
 * A git hook (`reference-transaction`, which git runs around every ref update) that acts
 * once on the first move of a branch (a task's, by default) from one commit to another
 * (a success's commit, a merge; not a worktree checking it out), or with `creation` on
 * the first branch made: `hold` holds git right after the branch has moved until the
 * test writes `release`; `refuse` makes git refuse that update. It writes `hooked` (its
 * pid) when it acts.
 */
function hookBranchMove(
  repo: string,
  mode: 'hold' | 'refuse',
  { branches = 'refs/heads/codeloops/', creation = false } = {},
): { hooked: string; release: string } {
  const dir = tempDir('codeloops-queue-hook-');
  const hooked = path.join(dir, 'hooked');
  const release = path.join(dir, 'release');
  const hook = path.join(repo, '.git', 'hooks', 'reference-transaction');
  fs.mkdirSync(path.dirname(hook), { recursive: true });
  fs.writeFileSync(
    hook,
    `#!${process.execPath}
const fs = require('node:fs');
const updates = fs.readFileSync(0, 'utf8');
const state = process.argv[2];
const wanted = ${JSON.stringify(mode === 'hold' ? 'committed' : 'prepared')};
const moved = updates.split('\\n').map((line) => line.split(' ')).some(([from, to, ref]) => ref?.startsWith(${JSON.stringify(branches)}) && /^0+$/.test(from) === ${creation} && from !== to);
if (state === wanted && !fs.existsSync(${JSON.stringify(hooked)}) && moved) {
  fs.writeFileSync(${JSON.stringify(hooked)}, String(process.pid));
  if (wanted === 'prepared') process.exit(1);
  const tick = new Int32Array(new SharedArrayBuffer(4));
  while (!fs.existsSync(${JSON.stringify(release)})) Atomics.wait(tick, 0, 0, 20);
}
`,
    { mode: 0o755 },
  );
  return { hooked, release };
}

/** What `file` says once something wrote it, while `run` runs (it failing the test if `run` ends first). */
async function fileWritten(file: string, run: CliRun): Promise<string> {
  while (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') === '') {
    if (run.child.exitCode !== null || run.child.signalCode !== null) throw new Error(`${file} was never written:\n${(await run.done).stderr}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return fs.readFileSync(file, 'utf8');
}

/** Runs the CLI with `args` until `hook` holds git, kills it there with SIGKILL, then lets the held git go and waits for it to end. */
async function killedWhileHooked(hook: { hooked: string; release: string }, args: string[], options: CliOptions): Promise<void> {
  const running = startCli(args, options);
  const hookPid = Number(await fileWritten(hook.hooked, running));
  running.child.kill('SIGKILL');
  await running.done;
  fs.writeFileSync(hook.release, '');
  assert.ok(await waitUntilGone(hookPid));
}

describe('cli: codeloops queue', function () {
  this.timeout(120_000);
  const leftovers: number[] = [];
  afterEach(() => {
    for (const pid of leftovers.splice(0)) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  });
  after(removeTempDirs);

  it('runs three tasks on their own branches (one fails, one waits for an answer, then is answered); the user’s branch, HEAD, index, tree and stash are untouched', async () => {
    const { repo, env, home } = queueSetup();
    const base = git(repo, 'rev-parse', 'HEAD').trim();
    userAtWork(repo);
    const before = userState(repo);
    for (const args of [
      ['-p', 'TASK-alpha: write alpha'],
      ['-p', 'TASK-broken: #fail at it', '-n', '2'],
      ['-p', 'TASK-colour: #ask which colour'],
    ]) {
      const added = await runCli(['queue', 'add', ...args], { cwd: repo, env });
      assert.equal(added.code, 0, added.stderr);
    }

    const run = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /Task 3 needs your answer: Which colour\?\n {2}Answer it: codeloops queue answer 3 "<your answer>"/);
    assert.match(run.stderr, /Queue done: 2 finished, 1 waiting for an answer, 0 left/);
    let queue = queueOf(home.dataHome);
    assert.equal(queue.base_commit, base);
    assert.deepEqual(
      queue.tasks.map((task) => [task.id, task.branch, task.state, task.outcome]),
      [
        [1, 'codeloops/1-task-alpha-write-alpha', 'finished', 'success'],
        [2, 'codeloops/2-task-broken-fail-at-it', 'finished', 'max_iterations_reached'],
        [3, 'codeloops/3-task-colour-ask-which-colour', 'needs_input', null],
      ],
    );
    // A success is one commit on its branch: the critic's summary, by the user's git identity; its tree the loop's.
    assert.equal(commitsOn(repo, 'codeloops/1-task-alpha-write-alpha', base), 'Repo User <repo.user@example.com>|Wrote alpha.txt for TASK-alpha');
    assert.equal(git(repo, 'show', 'codeloops/1-task-alpha-write-alpha:alpha.txt'), 'alpha\n');
    assert.equal(git(repo, 'diff', '--name-only', base, 'codeloops/1-task-alpha-write-alpha').trim(), 'alpha.txt');
    // A failed task's branch has no commit of ours; a waiting one keeps its worktree.
    assert.equal(commitsOn(repo, 'codeloops/2-task-broken-fail-at-it', base), '');
    assert.ok(queue.tasks[2]!.worktree && fs.existsSync(queue.tasks[2]!.worktree));
    assert.equal(queue.tasks[2]!.question, 'Which colour?');

    const answered = await runCli(['queue', 'answer', '3', 'colour: blue'], { cwd: repo, env });
    assert.equal(answered.code, 0, answered.stderr);
    assert.match(answered.stderr, /Answered task 3; carrying it on\./);
    queue = queueOf(home.dataHome);
    assert.equal(queue.tasks[2]!.outcome, 'success');
    assert.equal(queue.tasks[2]!.session_ids.length, 2, 'carried on in a new session linked to the one that asked');
    assert.equal(git(repo, 'show', 'codeloops/3-task-colour-ask-which-colour:colour.txt'), 'blue\n');
    assert.equal(commitsOn(repo, 'codeloops/3-task-colour-ask-which-colour', base), 'Repo User <repo.user@example.com>|Wrote colour.txt for TASK-colour');

    assert.deepEqual(userState(repo), before);
    assert.equal(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 1, 'the finished tasks’ worktrees are removed');

    const report = await runCli(['queue', 'report'], { cwd: repo, env });
    assert.equal(report.code, 0, report.stderr);
    assert.match(report.stdout, /\| 1 \| TASK-alpha: write alpha \| success \(unverified\) \| codeloops\/1-task-alpha-write-alpha \| 1 files \+1 −0 \|/);
    assert.match(report.stdout, /\| 2 \| TASK-broken: #fail at it \| max_iterations_reached \|/);
    assert.match(report.stdout, /Open finding F1\.1: broken\.txt is missing/);
    assert.match(report.stdout, /Totals: 3 tasks, 2 succeeded, 1 did not, 0 waiting for an answer, 0 not finished/);
  });

  it('after a SIGKILL in the middle, queue run carries on: the finished task is not run again, the one stopped is resumed in its session', async () => {
    const { repo, env, agent, home } = queueSetup();
    for (const prompt of ['TASK-alpha: write alpha', 'TASK-held: #hold then write', 'TASK-gamma: write gamma'])
      assert.equal((await runCli(['queue', 'add', '-p', prompt], { cwd: repo, env })).code, 0);
    const running = startCli(['queue', 'run'], { cwd: repo, env });
    const heldFile = path.join(agent.dir, 'held');
    await running.waitForStderr(/Task 2: started/);
    while (!fs.existsSync(heldFile) || fs.readFileSync(heldFile, 'utf8') === '') await new Promise((resolve) => setImmediate(resolve));
    const agentPid = Number(fs.readFileSync(heldFile, 'utf8'));
    leftovers.push(agentPid);
    running.child.kill('SIGKILL');
    await running.done;
    // What the dead runner left running is stopped, as `loop_running` would ask.
    process.kill(-agentPid, 'SIGKILL');
    assert.ok(await waitUntilGone(agentPid));
    assert.equal(queueOf(home.dataHome).tasks[1]!.state, 'running');

    const again = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /Task 2: carrying on on codeloops\/2-task-held-hold-then-write/);
    assert.doesNotMatch(again.stderr, /Task 1:/);
    const queue = queueOf(home.dataHome);
    assert.deepEqual(
      queue.tasks.map((task) => task.outcome),
      ['success', 'success', 'success'],
    );
    assert.equal(actorCallsFor(agent, 'alpha'), 1, 'the finished task was not run again');
    assert.equal(queue.tasks[1]!.session_ids.length, 1, 'the session without an end goes on in the same file');
    assert.equal(git(repo, 'show', 'codeloops/2-task-held-hold-then-write:held.txt'), 'held\n');
    assert.equal(isRunning(agentPid), false);

    const nothing = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.equal(nothing.code, 2);
    assert.match(nothing.stderr, /The queue has no task to run\.\nAdd one: codeloops queue add -p "<task>"/);
  });

  it('an answer given while the queue runs is carried on by that run', async () => {
    const { repo, env, agent, home } = queueSetup();
    for (const prompt of ['TASK-colour: #ask which colour', 'TASK-slow: #wait then write'])
      assert.equal((await runCli(['queue', 'add', '-p', prompt], { cwd: repo, env })).code, 0);
    const running = startCli(['queue', 'run'], { cwd: repo, env });
    await running.waitForStderr(/Task 1 needs your answer: Which colour\?/);
    await running.waitForStderr(/Task 2: started/);
    // One run of a queue at a time; a running task cannot be removed.
    const second = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.equal(second.code, 2);
    assert.match(second.stderr, new RegExp(`is running in process ${running.child.pid}\\.\\nLet it finish, or stop it \\("kill ${running.child.pid}"\\)`));
    const removing = await runCli(['queue', 'remove', '2', '--json'], { cwd: repo, env });
    assert.equal((JSON.parse(removing.stdout) as { error: { code: string } }).error.code, 'queue_running');
    const answered = await runCli(['queue', 'answer', '1', 'colour: red'], { cwd: repo, env });
    assert.equal(answered.code, 0, answered.stderr);
    assert.match(answered.stderr, new RegExp(`Answered task 1; the queue running in process ${running.child.pid} carries it on\\.`));
    fs.writeFileSync(path.join(agent.dir, 'release'), '');
    const ended = await running.done;
    assert.equal(ended.code, 0, ended.stderr);
    assert.match(ended.stderr, /Task 1: carrying on on codeloops\/1-task-colour-ask-which-colour\nTask 1: success/);
    assert.match(ended.stderr, /Queue done: 2 finished, 0 waiting for an answer, 0 left/);
    const queue = queueOf(home.dataHome);
    assert.deepEqual(
      queue.tasks.map((task) => [task.outcome, task.answer]),
      [
        ['success', 'colour: red'],
        ['success', null],
      ],
    );
    assert.equal(git(repo, 'show', 'codeloops/1-task-colour-ask-which-colour:colour.txt'), 'red\n');
  });

  it('refuses a task whose branch exists (branch_exists) and goes on; --stack starts each branch from the last success', async () => {
    const { repo, env, home } = queueSetup();
    fs.appendFileSync(path.join(home.configHome, 'codeloops', 'config.toml'), '\n[queue]\nauthor = "Night Shift <night@example.com>"\n');
    const base = git(repo, 'rev-parse', 'HEAD').trim();
    git(repo, 'branch', 'codeloops/1-task-alpha-write-alpha');
    writeFile(repo, 'mine.txt', 'mine\n');
    git(repo, 'add', 'mine.txt');
    git(repo, 'commit', '-q', '-m', 'mine');
    git(repo, 'branch', '-f', 'codeloops/1-task-alpha-write-alpha');
    const theirs = git(repo, 'rev-parse', 'codeloops/1-task-alpha-write-alpha').trim();
    for (const prompt of ['TASK-alpha: write alpha', 'TASK-beta: write beta', 'TASK-gamma: write gamma'])
      assert.equal((await runCli(['queue', 'add', '-p', prompt], { cwd: repo, env })).code, 0);
    const run = await runCli(['queue', 'run', '--stack'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /Task 1: refused: The branch codeloops\/1-task-alpha-write-alpha already exists/);
    const queue = queueOf(home.dataHome);
    assert.deepEqual(
      queue.tasks.map((task) => [task.outcome, task.result?.error_code ?? null]),
      [
        ['refused', 'branch_exists'],
        ['success', null],
        ['success', null],
      ],
    );
    assert.equal(git(repo, 'rev-parse', 'codeloops/1-task-alpha-write-alpha').trim(), theirs, 'never overwritten');
    const head = git(repo, 'rev-parse', 'HEAD').trim();
    assert.notEqual(head, base);
    // Stacked: gamma's branch holds beta's commit under its own.
    assert.equal(
      git(repo, 'log', '--format=%s', `${head}..codeloops/3-task-gamma-write-gamma`).trim(),
      'Wrote gamma.txt for TASK-gamma\nWrote beta.txt for TASK-beta',
    );
    assert.equal(git(repo, 'show', 'codeloops/3-task-gamma-write-gamma:beta.txt'), 'beta\n');
    // `[queue] author` over the user's git identity.
    assert.equal(commitsOn(repo, 'codeloops/2-task-beta-write-beta', head), 'Night Shift <night@example.com>|Wrote beta.txt for TASK-beta');
  });

  it('adds each unchecked item of a checklist with its details; lists, moves and removes by stable ids; bad input has stable codes', async () => {
    const { repo, env } = queueSetup();
    const checklist = path.join(tempDir('codeloops-queue-list-'), 'tasks.md');
    fs.writeFileSync(
      checklist,
      '# Tonight\n\n- [ ] Add alpha\n  It writes alpha.txt.\n\n  - keep it short\n- [x] Done already\n* [ ] Add beta\n1. [ ] Add gamma\nnot a task\n',
    );
    const added = await runCli(['queue', 'add', '--file', checklist, '--json', '-n', '3'], { cwd: repo, env });
    assert.equal(added.code, 0, added.stderr);
    const tasks = (JSON.parse(added.stdout) as { added: QueueTask[] }).added;
    assert.deepEqual(
      tasks.map((task) => [task.id, task.prompt, task.flags]),
      [
        [1, 'Add alpha\n\nIt writes alpha.txt.\n\n- keep it short', { maxIterations: 3 }],
        [2, 'Add beta', { maxIterations: 3 }],
        [3, 'Add gamma', { maxIterations: 3 }],
      ],
    );
    assert.equal((await runCli(['queue', 'move', '3', '1'], { cwd: repo, env })).code, 0);
    assert.equal((await runCli(['queue', 'remove', '2'], { cwd: repo, env })).code, 0);
    assert.equal((await runCli(['queue', 'add', '-p', 'Add delta'], { cwd: repo, env })).code, 0);
    const listed = await runCli(['queue', 'list', '--json'], { cwd: repo, env });
    assert.deepEqual(
      (JSON.parse(listed.stdout) as { tasks: QueueTask[] }).tasks.map((task) => [task.id, task.branch]),
      [
        [3, 'codeloops/3-add-gamma'],
        [1, 'codeloops/1-add-alpha'],
        [4, 'codeloops/4-add-delta'],
      ],
      'ids are never reused; moving changes the order, not the ids',
    );
    const text = await runCli(['queue', 'list'], { cwd: repo, env });
    assert.match(text.stdout, /^#\s+ID\s+STATE\s+BRANCH\s+TASK\n1\s+3\s+queued\s+codeloops\/3-add-gamma\s+Add gamma\n/);

    const codeOf = async (args: string[], cwd = repo) => {
      const result = await runCli([...args, '--json'], { cwd, env });
      assert.equal(result.code, 2, result.stderr);
      return (JSON.parse(result.stdout) as { error: { code: string; hint: string | null } }).error;
    };
    assert.equal((await codeOf(['queue', 'remove', '2'])).code, 'task_not_found');
    assert.equal((await codeOf(['queue', 'move', '9', '1'])).code, 'task_not_found');
    assert.equal((await codeOf(['queue', 'list'], tempDir('codeloops-not-a-repo-'))).code, 'not_a_repository');
    assert.equal((await codeOf(['queue', 'add'])).code, 'usage');
    const { repo: empty } = queueSetup();
    assert.equal((await codeOf(['queue', 'report'], empty)).code, 'queue_empty');
  });

  it('writes the report as HTML that shows hostile task text as text, under a strict policy', async () => {
    const { repo, env } = queueSetup('none');
    const hostile = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>';
    assert.equal((await runCli(['queue', 'add', '-p', `TASK-alpha: ${hostile}`], { cwd: repo, env })).code, 0);
    assert.equal((await runCli(['queue', 'run'], { cwd: repo, env })).code, 0);
    const file = path.join(tempDir('codeloops-queue-report-'), 'report.html');
    const report = await runCli(['queue', 'report', '--html', file], { cwd: repo, env });
    assert.equal(report.code, 0, report.stderr);
    const browser = await launchChromium();
    try {
      const page = await (await browser.newContext()).newPage();
      const requests: string[] = [];
      page.on('request', (request) => requests.push(request.url()));
      await page.goto(pathToFileURL(file).href);
      assert.equal(await page.evaluate(() => (window as { pwned?: number }).pwned), undefined);
      assert.equal(await page.locator('script, img').count(), 0);
      assert.equal(await page.locator('tr.task td.task').textContent(), `TASK-alpha: ${hostile}`);
      assert.equal(await page.locator('tr.task td.outcome').textContent(), 'success (unverified)');
      assert.deepEqual(requests, [pathToFileURL(file).href]);
    } finally {
      await browser.close();
    }
    // With no git identity and no `[queue] author`, codeloops commits.
    assert.match(
      git(repo, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', '--branches=codeloops/1-*'),
      /^codeloops <codeloops@localhost>\|codeloops <codeloops@localhost>\n$/,
    );
  });

  it('queue merge merges a finished task into the current branch leaving the user’s other work alone, undoes it, and refuses a conflict (merge_conflict) or changes in its way (tree_changed)', async () => {
    const { repo, env } = queueSetup();
    for (const prompt of ['TASK-alpha: write alpha', 'TASK-beta: write beta', 'TASK-gamma: write gamma', 'TASK-broken: #fail at it'])
      assert.equal((await runCli(['queue', 'add', '-p', prompt, '-n', '1'], { cwd: repo, env })).code, 0);
    assert.equal((await runCli(['queue', 'run'], { cwd: repo, env })).code, 0);
    // The user's branch moved on: beta.txt of their own, which the task wrote otherwise.
    writeFile(repo, 'beta.txt', 'my beta\n');
    git(repo, 'add', 'beta.txt');
    git(repo, 'commit', '-q', '-m', 'my beta');
    userAtWork(repo);
    writeFile(repo, 'gamma.txt', 'my untracked gamma\n');
    const before = userState(repo);
    const merge = async (...args: string[]) => {
      const result = await runCli(['queue', 'merge', ...args, '--json'], { cwd: repo, env });
      return {
        code: result.code,
        json: JSON.parse(result.stdout) as { status?: string; files?: string[]; error?: { code: string; details: Record<string, unknown> } },
      };
    };

    const conflict = await merge('2');
    assert.equal(conflict.code, 2);
    assert.equal(conflict.json.error?.code, 'merge_conflict');
    assert.deepEqual(conflict.json.error?.details.files, ['beta.txt']);
    const inTheWay = await merge('3');
    assert.equal(inTheWay.json.error?.code, 'tree_changed');
    assert.deepEqual(inTheWay.json.error?.details.changed, ['gamma.txt']);
    assert.equal((await merge('4')).json.error?.code, 'merge_refused');
    assert.deepEqual(userState(repo), before, 'a refused merge changes nothing');

    const merged = await merge('1');
    assert.equal(merged.code, 0);
    assert.deepEqual([merged.json.status, merged.json.files], ['merged', ['alpha.txt']]);
    assert.equal(git(repo, 'log', '-1', '--format=%P', 'HEAD').trim().split(' ')[1], git(repo, 'rev-parse', 'codeloops/1-task-alpha-write-alpha').trim());
    assert.equal(fs.readFileSync(path.join(repo, 'alpha.txt'), 'utf8'), 'alpha\n');
    // The user's staged, unstaged, untracked and ignored files and stash as they were; alpha.txt committed, so clean.
    const after = userState(repo);
    assert.equal(after.status, before.status);
    assert.equal(after.stash, before.stash);
    assert.equal(git(repo, 'diff', '--cached', '--name-only').trim(), 'staged.txt');
    assert.equal((await merge('1')).json.status, 'already_merged');

    const undone = await merge('1', '--undo');
    assert.deepEqual([undone.json.status, undone.json.files], ['undone', ['alpha.txt']]);
    const restored = userState(repo);
    assert.deepEqual({ ...restored, index: null }, { ...before, index: null });
    assert.equal(git(repo, 'diff', '--cached', '--name-only').trim(), 'staged.txt');
    assert.equal((await merge('1', '--undo')).json.error?.code, 'merge_refused');
  });

  it('queue merge refuses (tree_changed, naming them) to write over anything of the user’s: a folder where a file goes, a file or link where a folder goes, ignored files, files git is told not to watch; --undo as well', async () => {
    const { repo, env, home } = queueSetup();
    writeFile(repo, 'old', 'old\n');
    writeFile(repo, 'config.ini', 'shared = 1\n');
    git(repo, 'add', 'old', 'config.ini');
    git(repo, 'commit', '-q', '-m', 'old and config');
    await addTasks(
      repo,
      env,
      [
        'TASK-notes: #write notes',
        'TASK-docs: #write docs/guide.md',
        'TASK-out: #write out/report.txt',
        'TASK-build: #write build',
        'TASK-log: #write debug.log',
        'TASK-conf: #write config.ini',
        'TASK-old: #delete old',
        'TASK-alpha: write alpha',
      ],
      '-n',
      '1',
    );
    const run = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      queueOf(home.dataHome).tasks.map((task) => task.outcome),
      Array(8).fill('success'),
    );

    // The user's things, each where one task writes.
    writeFile(repo, 'notes/todo.txt', 'my todo\n');
    writeFile(repo, 'docs', 'my docs, a file\n');
    const elsewhere = tempDir('codeloops-queue-elsewhere-');
    fs.symlinkSync(elsewhere, path.join(repo, 'out'));
    writeFile(repo, '.git/info/exclude', 'build/\n*.log\n');
    writeFile(repo, 'build/cache.bin', 'cache\n');
    writeFile(repo, 'debug.log', 'my log\n');
    git(repo, 'update-index', '--assume-unchanged', 'config.ini');
    writeFile(repo, 'config.ini', 'shared = 1\nmy local = 2\n');
    const before = userState(repo);
    for (const [id, inTheWay] of [
      ['1', ['notes/todo.txt']],
      ['2', ['docs']],
      ['3', ['out']],
      ['4', ['build/']],
      ['5', ['debug.log']],
      ['6', ['config.ini']],
    ] as const) {
      const refused = await queueMerge(repo, env, id);
      assert.equal(refused.code, 2, `task ${id}: ${JSON.stringify(refused.json)}`);
      assert.equal(refused.json.error?.code, 'tree_changed', `task ${id}`);
      assert.deepEqual(refused.json.error?.details.changed, inTheWay, `task ${id}`);
    }
    assert.deepEqual(userState(repo), before, 'nothing of the user’s changed');
    assert.deepEqual(fs.readdirSync(elsewhere), [], 'nothing written through the link');

    // Undo: the task deleted `old`; the user has since made a folder of that name.
    const merged = await queueMerge(repo, env, '7');
    assert.deepEqual([merged.json.status, merged.json.files], ['merged', ['old']]);
    writeFile(repo, 'old/mine.txt', 'mine\n');
    const undoOld = await queueMerge(repo, env, '7', '--undo');
    assert.equal(undoOld.json.error?.code, 'tree_changed');
    assert.deepEqual(undoOld.json.error?.details.changed, ['old/mine.txt']);
    assert.equal(fs.readFileSync(path.join(repo, 'old', 'mine.txt'), 'utf8'), 'mine\n');
    fs.rmSync(path.join(repo, 'old'), { recursive: true });
    assert.equal((await queueMerge(repo, env, '7', '--undo')).json.status, 'undone');
    assert.equal(fs.readFileSync(path.join(repo, 'old'), 'utf8'), 'old\n');

    // Undo: the user edited a file the merge wrote.
    assert.equal((await queueMerge(repo, env, '8')).json.status, 'merged');
    writeFile(repo, 'alpha.txt', 'alpha, edited by me\n');
    const undoAlpha = await queueMerge(repo, env, '8', '--undo');
    assert.equal(undoAlpha.json.error?.code, 'tree_changed');
    assert.deepEqual(undoAlpha.json.error?.details.changed, ['alpha.txt']);
    assert.equal(fs.readFileSync(path.join(repo, 'alpha.txt'), 'utf8'), 'alpha, edited by me\n');
  });

  it('queue merge takes a task that turns a folder into a file, and undoes one that turns a file into a folder, while a file of the user’s inside still refuses it', async () => {
    const { repo, env } = queueSetup();
    writeFile(repo, 'lib/a.js', 'a\n');
    writeFile(repo, 'lib/deep/b.js', 'b\n');
    writeFile(repo, 'notes.md', 'notes\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'a folder and a file');
    await addTasks(repo, env, ['TASK-lib: #write lib', 'TASK-notes: #write notes.md/index.md'], '-n', '1');
    assert.equal((await runCli(['queue', 'run'], { cwd: repo, env })).code, 0);

    // The user's file inside the folder the task makes a file: named, nothing changed.
    writeFile(repo, 'lib/mine.js', 'mine\n');
    const refused = await queueMerge(repo, env, '1');
    assert.equal(refused.json.error?.code, 'tree_changed');
    assert.deepEqual(refused.json.error?.details.changed, ['lib/mine.js']);
    fs.rmSync(path.join(repo, 'lib', 'mine.js'));

    const before = userState(repo);
    const merged = await queueMerge(repo, env, '1');
    assert.equal(merged.json.status, 'merged', JSON.stringify(merged.json));
    assert.equal(fs.readFileSync(path.join(repo, 'lib'), 'utf8'), 'lib\n');
    assert.equal(git(repo, 'status', '--porcelain').trim(), '');
    assert.equal((await queueMerge(repo, env, '1', '--undo')).json.status, 'undone');
    assert.deepEqual({ ...userState(repo), index: null }, { ...before, index: null }, 'the folder back, file for file');

    const folder = await queueMerge(repo, env, '2');
    assert.equal(folder.json.status, 'merged', JSON.stringify(folder.json));
    assert.equal(fs.readFileSync(path.join(repo, 'notes.md', 'index.md'), 'utf8'), 'notes\n');
    const undone = await queueMerge(repo, env, '2', '--undo');
    assert.equal(undone.json.status, 'undone', JSON.stringify(undone.json));
    assert.equal(fs.readFileSync(path.join(repo, 'notes.md'), 'utf8'), 'notes\n');
    assert.equal(git(repo, 'status', '--porcelain').trim(), '');
  });

  it('queue merge is all or nothing: with the index locked it changes nothing (merge_refused), when moving the branch fails it puts the files and the index back, and killed as the branch moves it leaves no lock and nothing for the next commit to drop', async () => {
    const { repo, env } = queueSetup();
    await addTasks(repo, env, ['TASK-alpha: write alpha']);
    assert.equal((await runCli(['queue', 'run'], { cwd: repo, env })).code, 0);
    userAtWork(repo);
    const before = userState(repo);
    const branch = git(repo, 'symbolic-ref', '--short', 'HEAD').trim();

    // A git command that crashed left its lock: the merge is refused before anything moves.
    const indexLock = path.join(repo, '.git', 'index.lock');
    fs.writeFileSync(indexLock, '');
    const locked = await queueMerge(repo, env, '1');
    assert.equal(locked.code, 2);
    assert.equal(locked.json.error?.code, 'merge_refused');
    assert.equal(locked.json.error?.details.reason, 'index_locked');
    assert.match(locked.json.error?.message ?? '', /index\.lock exists/);
    assert.deepEqual(userState(repo), before);
    fs.rmSync(indexLock);

    // The branch's own lock: the files were written by then, and are put back.
    const branchLock = path.join(repo, '.git', 'refs', 'heads', `${branch}.lock`);
    fs.writeFileSync(branchLock, '');
    const failed = await queueMerge(repo, env, '1');
    assert.equal(failed.code, 2);
    // A lock a crashed git left is named, so that the user can remove it.
    assert.equal(failed.json.error?.code, 'git_locked');
    assert.match(String(failed.json.error?.details.lock_file), new RegExp(`${branch}\\.lock$`));
    assert.deepEqual(userState(repo), before);
    assert.equal(fs.existsSync(indexLock), false, 'the index is let go');
    fs.rmSync(branchLock);

    // Killed as the branch moves (a hook holds git there): the files and the index are written by then.
    const hook = hookBranchMove(repo, 'hold', { branches: `refs/heads/${branch}` });
    await killedWhileHooked(hook, ['queue', 'merge', '1'], { cwd: repo, env });
    assert.equal(fs.existsSync(indexLock), false, 'no lock left to the user');
    assert.equal(git(repo, 'log', '-1', '--format=%P', 'HEAD').trim().split(' ')[1], git(repo, 'rev-parse', 'codeloops/1-task-alpha-write-alpha').trim());
    const after = userState(repo);
    assert.equal(after.status, before.status, 'alpha.txt committed, in the index and on disk; the user’s own changes as they were');
    assert.equal(after.stash, before.stash);
    // The user's next commit keeps the merge's alpha.txt.
    git(repo, 'commit', '-q', '-m', 'my staged work');
    assert.equal(git(repo, 'show', 'HEAD:alpha.txt'), 'alpha\n');
    assert.equal(git(repo, 'show', 'HEAD:staged.txt'), 'staged\n');
  });

  it('after a SIGKILL of queue run while its only task runs, the next run carries that task on (not queue_empty)', async () => {
    const { repo, env, agent, home } = queueSetup();
    await addTasks(repo, env, ['TASK-held: #hold then write']);
    const running = startCli(['queue', 'run'], { cwd: repo, env });
    const agentPid = Number(await fileWritten(path.join(agent.dir, 'held'), running));
    leftovers.push(agentPid);
    running.child.kill('SIGKILL');
    await running.done;
    process.kill(-agentPid, 'SIGKILL');
    assert.ok(await waitUntilGone(agentPid));
    assert.equal(queueOf(home.dataHome).tasks[0]!.state, 'running');
    // Nothing runs it: the list says so.
    assert.match((await runCli(['queue', 'list'], { cwd: repo, env })).stdout, /\n1\s+1\s+stopped, to carry on\s+codeloops\/1-task-held/);

    const again = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /Task 1: carrying on on codeloops\/1-task-held-hold-then-write\nTask 1: success/);
    assert.equal(queueOf(home.dataHome).tasks[0]!.outcome, 'success');
    assert.equal(git(repo, 'show', 'codeloops/1-task-held-hold-then-write:held.txt'), 'held\n');
  });

  it('a task held by an agent its killed runner left running, or by a lock file a crashed git left, waits queued while the others run, and the run ends; once let go, the next run carries it on', async () => {
    const { repo, env, agent, home } = queueSetup();
    await addTasks(repo, env, ['TASK-held: #hold then write', 'TASK-alpha: write alpha', 'TASK-beta: write beta']);
    const running = startCli(['queue', 'run'], { cwd: repo, env });
    const agentPid = Number(await fileWritten(path.join(agent.dir, 'held'), running));
    leftovers.push(agentPid);
    running.child.kill('SIGKILL');
    await running.done;
    // A git that crashed while it moved task 3's branch left its lock.
    const branchLock = path.join(repo, '.git', 'refs', 'heads', 'codeloops', '3-task-beta-write-beta.lock');
    writeFile(repo, path.relative(repo, branchLock), '');

    const again = await runCli(['queue', 'run'], { cwd: repo, env, timeoutMs: 60_000 });
    assert.equal(again.timedOut, false, `queue run kept trying the held tasks:\n${again.stderr.slice(0, 3000)}`);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stderr.match(/Task 1: interrupted: .*still runs: process group/g)?.length, 1, again.stderr);
    assert.equal(again.stderr.match(/Task 3: interrupted: .*3-task-beta-write-beta\.lock exists/g)?.length, 1, again.stderr);
    assert.match(again.stderr, /Task 2: success/);
    assert.deepEqual(
      queueOf(home.dataHome).tasks.map((task) => [task.state, task.outcome]),
      [
        ['queued', null],
        ['finished', 'success'],
        ['queued', null],
      ],
    );

    process.kill(-agentPid, 'SIGKILL');
    assert.ok(await waitUntilGone(agentPid));
    fs.rmSync(branchLock);
    const last = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.equal(last.code, 0, last.stderr);
    assert.deepEqual(
      queueOf(home.dataHome).tasks.map((task) => task.outcome),
      ['success', 'success', 'success'],
    );
    assert.equal(git(repo, 'show', 'codeloops/3-task-beta-write-beta:beta.txt'), 'beta\n');
  });

  it('after a SIGKILL just after a task’s branch was made, the next run takes that branch for the task’s own (not branch_exists); another queue’s branch of that name stays refused', async () => {
    const { repo, env, home } = queueSetup();
    await addTasks(repo, env, ['TASK-alpha: write alpha']);
    const hook = hookBranchMove(repo, 'hold', { creation: true });
    await killedWhileHooked(hook, ['queue', 'run'], { cwd: repo, env });
    assert.equal(queueOf(home.dataHome).tasks[0]!.start_commit, null, 'killed before the start was recorded');

    const again = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /Task 1: started on codeloops\/1-task-alpha-write-alpha\nTask 1: success/);
    assert.equal(git(repo, 'show', 'codeloops/1-task-alpha-write-alpha:alpha.txt'), 'alpha\n');

    // The queue's file moved away, the same task added again: the branch of the first one is never taken.
    const file = (JSON.parse((await runCli(['queue', 'list', '--json'], { cwd: repo, env })).stdout) as { file: string }).file;
    fs.renameSync(file, `${file}.old`);
    await addTasks(repo, env, ['TASK-alpha: write alpha']);
    const before = git(repo, 'rev-parse', 'codeloops/1-task-alpha-write-alpha').trim();
    const refused = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.match(refused.stderr, /Task 1: refused: The branch codeloops\/1-task-alpha-write-alpha already exists/);
    assert.equal(git(repo, 'rev-parse', 'codeloops/1-task-alpha-write-alpha').trim(), before);
  });

  it('after a SIGKILL just after a task’s success was committed, the next run finishes that task from its session: its commit kept, its agents not run again', async () => {
    const { repo, env, agent, home } = queueSetup();
    const base = git(repo, 'rev-parse', 'HEAD').trim();
    await addTasks(repo, env, ['TASK-alpha: write alpha']);
    const hook = hookBranchMove(repo, 'hold');
    // git holds here, the branch moved to the task's commit, until the test lets it go.
    await killedWhileHooked(hook, ['queue', 'run'], { cwd: repo, env });
    const committed = git(repo, 'rev-parse', 'codeloops/1-task-alpha-write-alpha').trim();
    assert.equal(commitsOn(repo, committed, base), 'Repo User <repo.user@example.com>|Wrote alpha.txt for TASK-alpha');
    const left = queueOf(home.dataHome).tasks[0]!;
    assert.equal(left.state, 'running');
    assert.ok(left.worktree && fs.existsSync(left.worktree));

    const again = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /Task 1: success/);
    assert.doesNotMatch(again.stderr, /started|carrying on/);
    const task = queueOf(home.dataHome).tasks[0]!;
    assert.deepEqual([task.state, task.outcome, task.commit, task.result?.files_changed], ['finished', 'success', committed, 1]);
    assert.equal(git(repo, 'rev-parse', 'codeloops/1-task-alpha-write-alpha').trim(), committed, 'the commit is kept, not made again');
    assert.equal(agent.calls('actor'), 1);
    assert.equal(fs.existsSync(left.worktree), false, 'its worktree is removed');
  });

  it('a critic’s summary with a NUL, escape sequences and a long first line is committed cleaned; a success whose commit fails stays queued with its worktree and the next run commits it', async () => {
    const { repo, env, agent, home } = queueSetup();
    await addTasks(repo, env, ['TASK-nul: write nul #nul', 'TASK-alpha: write alpha']);
    const hook = hookBranchMove(repo, 'refuse');
    const run = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    // Task 1's commit was the first update of a task's branch from a commit: git refused it.
    assert.ok(fs.existsSync(hook.hooked));
    assert.match(
      run.stderr,
      /Task 1: its loop ended, but recording its end failed: git update-ref failed[^\n]*\n {2}It stays queued with its worktree; the next "codeloops queue run" finishes it/,
    );
    assert.match(run.stderr, /Task 2: success/);
    assert.match(run.stderr, /Queue done: 1 finished, 0 waiting for an answer, 1 left/);
    const stopped = queueOf(home.dataHome).tasks[0]!;
    assert.deepEqual([stopped.state, stopped.outcome], ['queued', null]);
    assert.ok(stopped.worktree && fs.existsSync(stopped.worktree));

    const again = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /Task 1: success/);
    const task = queueOf(home.dataHome).tasks[0]!;
    assert.deepEqual([task.state, task.outcome], ['finished', 'success']);
    assert.equal(actorCallsFor(agent, 'nul'), 1, 'its loop is not run again');
    const message = git(repo, 'log', '-1', '--format=%B', 'codeloops/1-task-nul-write-nul-nul');
    assert.ok(![...message].some((char) => char < ' ' && char !== '\n'), `no control character in ${JSON.stringify(message)}`);
    const [subject, blank, firstLine, secondLine] = message.split('\n');
    assert.ok(subject!.length <= 100 && subject!.endsWith('…'), subject);
    assert.match(subject!, /^Wrote nul\.txt for TASK-nul and more and more/);
    assert.equal(blank, '');
    assert.match(firstLine!, /^Wrote nul\.txt for TASK-nul (and more ){32}and more$/);
    assert.equal(secondLine, 'Second line.');
  });

  it('an agent that deletes its branch, or moves it off the task’s start, still gets its success committed on the branch from the task’s start, said so; the branch merges', async () => {
    const { repo, env, home } = queueSetup();
    const base = git(repo, 'rev-parse', 'HEAD').trim();
    await addTasks(repo, env, ['TASK-gone: write gone #detach-delete', 'TASK-root: write root #orphan-branch']);
    const run = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(
        `Task 1: success\\n {2}The agent deleted the branch codeloops/1-task-gone-write-gone-detach-delete \\(or renamed it\\) and detached its worktree's HEAD; ` +
          `the tree it left is committed on codeloops/1-task-gone-write-gone-detach-delete, on top of the task's start ${base.slice(0, 12)}\\.`,
      ),
    );
    assert.match(
      run.stderr,
      /Task 2: success\n {2}The agent moved the branch codeloops\/2-task-root-write-root-orphan-branch to [0-9a-f]{12}, which does not come from the task's start;/,
    );
    const queue = queueOf(home.dataHome);
    for (const task of queue.tasks) {
      assert.equal(task.outcome, 'success');
      assert.equal(git(repo, 'rev-parse', task.branch).trim(), task.commit);
      assert.equal(git(repo, 'log', '-1', '--format=%P', task.branch).trim(), base, `${task.branch} is one commit on the task's start`);
      assert.match(task.result?.branch_changed ?? '', /^The agent (deleted|moved) the branch/);
    }
    assert.equal(git(repo, 'show', `${queue.tasks[0]!.branch}:gone.txt`), 'gone\n');
    const report = await runCli(['queue', 'report'], { cwd: repo, env });
    assert.match(report.stdout, /- The agent deleted the branch codeloops\/1-task-gone-write-gone-detach-delete/);
    for (const id of ['1', '2']) assert.equal((await queueMerge(repo, env, id)).json.status, 'merged');
    assert.equal(fs.readFileSync(path.join(repo, 'root.txt'), 'utf8'), 'root\n');
  });

  it('an agent that makes its branch a symbolic ref to the user’s branch gets its success committed on its own branch; the user’s branch, index and files are untouched', async () => {
    const { repo, env, home } = queueSetup();
    const base = git(repo, 'rev-parse', 'HEAD').trim();
    userAtWork(repo);
    const before = userState(repo);
    await addTasks(repo, env, ['TASK-link: write link #link-branch']);
    const run = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /Task 1: success\n {2}The agent deleted the branch codeloops\/1-task-link-write-link-link-branch \(or renamed it\) and detached/);
    assert.deepEqual(userState(repo), before, 'main is where it was, and what the user had staged and on disk');
    const task = queueOf(home.dataHome).tasks[0]!;
    assert.equal(git(repo, 'rev-parse', task.branch).trim(), task.commit);
    assert.equal(git(repo, 'log', '-1', '--format=%P', task.branch).trim(), base);
    assert.equal(git(repo, 'show', `${task.branch}:link.txt`), 'link\n');
  });

  it('queue add --file takes no item inside a fenced code block or an HTML comment as a task; a fence under an item stays in its details', async () => {
    const { repo, env } = queueSetup();
    const checklist = path.join(tempDir('codeloops-queue-list-'), 'tasks.md');
    fs.writeFileSync(
      checklist,
      [
        '# Tonight',
        '',
        '- [ ] Add alpha <!-- the easy one -->',
        '  Like this:',
        '  ```md',
        '  - [ ] an example inside the item',
        '  ```',
        '',
        'An example of the format:',
        '',
        '````markdown',
        '- [ ] not a task (in a fence)',
        '```',
        '- [ ] still not a task (a shorter fence does not close it)',
        '````',
        '~~~',
        '- [ ] not a task (in a tilde fence)',
        '~~~',
        '<!-- - [ ] commented out -->',
        '<!--',
        '- [ ] commented out over lines',
        '-->',
        '* [ ] Add beta',
      ].join('\n'),
    );
    const added = await runCli(['queue', 'add', '--file', checklist, '--json'], { cwd: repo, env });
    assert.equal(added.code, 0, added.stderr);
    assert.deepEqual(
      (JSON.parse(added.stdout) as { added: QueueTask[] }).added.map((task) => task.prompt),
      ['Add alpha\n\nLike this:\n```md\n- [ ] an example inside the item\n```', 'Add beta'],
    );
  });

  it('a queue file that is a FIFO is refused at once (not_a_file), a torn one says which file and how to go back to its previous copy (queue_invalid)', async () => {
    const { repo, env } = queueSetup();
    await addTasks(repo, env, ['TASK-alpha: write alpha', 'TASK-beta: write beta']);
    const file = (JSON.parse((await runCli(['queue', 'list', '--json'], { cwd: repo, env })).stdout) as { file: string }).file;
    const previous = `${file}.previous`;
    assert.deepEqual(
      queueFileSchema.parse(JSON.parse(fs.readFileSync(previous, 'utf8'))).tasks.map((task) => task.id),
      [1],
      'the queue before its last change is kept',
    );
    const errorOf = async (args: string[]) => {
      const result = await runCli([...args, '--json'], { cwd: repo, env, timeoutMs: 20_000 });
      assert.equal(result.timedOut, false, `${args.join(' ')} hung`);
      assert.equal(result.code, 2, result.stderr);
      assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
      return (JSON.parse(result.stdout) as { error: { code: string; message: string; hint: string | null } }).error;
    };

    const kept = fs.readFileSync(file);
    fs.rmSync(file);
    spawnSync('mkfifo', [file]);
    for (const args of [
      ['queue', 'list'],
      ['queue', 'add', '-p', 'TASK-gamma: write gamma'],
      ['queue', 'report'],
    ]) {
      const error = await errorOf(args);
      assert.equal(error.code, 'not_a_file', args.join(' '));
      assert.equal(error.message, `The queue file ${file} is a named pipe (FIFO), not a file.`);
    }
    fs.rmSync(file);
    fs.writeFileSync(file, kept);

    // A FIFO where the change lock or a checklist goes does not hang either.
    spawnSync('mkfifo', [`${file}.lock`]);
    const added = await runCli(['queue', 'add', '-p', 'TASK-gamma: write gamma'], { cwd: repo, env, timeoutMs: 20_000 });
    assert.equal(added.timedOut, false, 'queue add hung on the lock');
    assert.equal(added.code, 0, added.stderr);
    const checklist = path.join(tempDir('codeloops-queue-fifo-'), 'tasks.md');
    spawnSync('mkfifo', [checklist]);
    const fromFifo = await errorOf(['queue', 'add', '--file', checklist]);
    assert.equal(fromFifo.code, 'usage');
    assert.match(fromFifo.message, /is a named pipe \(FIFO\), not a file/);

    fs.writeFileSync(file, kept.subarray(0, 100));
    for (const args of [
      ['queue', 'list'],
      ['queue', 'add', '-p', 'TASK-gamma: write gamma'],
      ['queue', 'remove', '1'],
      ['queue', 'report'],
    ]) {
      const error = await errorOf(args);
      assert.equal(error.code, 'queue_invalid', args.join(' '));
      assert.match(
        error.message,
        new RegExp(
          `^The queue file ${file.replace(/[.]/g, '\\.')} cannot be read: not JSON \\(.*\\)\\. Its copy before the last change is ${previous.replace(/[.]/g, '\\.')}\\.$`,
        ),
      );
      assert.equal(
        error.hint,
        `Go back to the queue as it was before its last change: mv "${previous}" "${file}" (or move the file away to start an empty queue).`,
      );
    }
    const human = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.equal(human.code, 2);
    assert.match(human.stderr, /cannot be read: not JSON .*\nGo back to the queue as it was before its last change: mv/);
    assert.doesNotMatch(human.stderr, /\n\s+at /);
    fs.renameSync(previous, file);
    const listed = await runCli(['queue', 'list', '--json'], { cwd: repo, env });
    assert.deepEqual(
      (JSON.parse(listed.stdout) as { tasks: QueueTask[] }).tasks.map((task) => task.id),
      [1, 2],
      'the queue as it was before the last change (task 3 added)',
    );
  });
});
