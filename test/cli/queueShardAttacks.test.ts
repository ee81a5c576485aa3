import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { queueFileSchema, type QueueFile } from '../../src/sessionFormat/queueRecords.js';
import { runCli, startCli, type CliResult } from '../support/cliProcess.js';
import { queueSetup, shardMachine } from '../support/queueAgents.js';
import { git, removeTempDirs, tempDir, writeFile } from '../support/testEnvironment.js';

/**
 * A queue across machines, attacked: what a hostile remote, a crafted tasks file or a
 * crash at the worst moment does to the shards and to the queue at home.
 */

type Env = Record<string, string>;

function queueFileOf(dataHome: string): string {
  const folder = path.join(dataHome, 'codeloops', 'queues');
  return path.join(
    folder,
    fs.readdirSync(folder).find((name) => /^[0-9a-f]+\.json$/.test(name))!,
  );
}

function queueOf(dataHome: string): QueueFile {
  return queueFileSchema.parse(JSON.parse(fs.readFileSync(queueFileOf(dataHome), 'utf8')));
}

/** Every file under `folder`, read as text, joined. */
function allText(folder: string): string {
  return fs
    .readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => fs.readFileSync(path.join(entry.parentPath, entry.name), 'latin1'))
    .join('\n');
}

interface ImportAnswer {
  imported: { id: number; outcome: string }[];
  already_imported: number[];
  sessions: string[];
  warnings: string[];
  error?: { code: string; message: string };
}

describe('cli: a queue across machines, attacked', function () {
  this.timeout(300_000);
  after(removeTempDirs);

  const SECRET = 's3cretTOKEN';
  const TASKS = ['TASK-alpha: write alpha', 'TASK-beta: \u001b]0;PWNED\u0007\u001b[31mwrite\u001b[0m beta', 'TASK-gamma: write gamma'];
  let home: string;
  let env: Env;
  let dataHome: string;
  let remote: string;
  let remoteBefore: string;
  let whole: { run: CliResult; bundle: string; clone: string };
  let leaky: { run: CliResult; bundle: string; dataHome: string };

  before(async () => {
    const setup = queueSetup();
    ({ repo: home, env } = setup);
    dataHome = setup.home.dataHome;
    for (const prompt of TASKS) assert.equal((await runCli(['queue', 'add', '-p', prompt, '-n', '1'], { cwd: home, env })).code, 0);
    assert.equal((await runCli(['queue', 'export'], { cwd: home, env })).code, 0);
    git(home, 'add', 'codeloops-queue.json');
    git(home, 'commit', '-q', '-m', 'the queue, for the machines');

    // The remote has a branch of task 1's name already, at a commit of someone else's.
    remote = path.join(tempDir('codeloops-remote-'), 'remote.git');
    git(path.dirname(remote), 'init', '-q', '--bare', remote);
    const other = shardMachine(home, env).clone;
    writeFile(other, 'theirs.txt', 'theirs\n');
    git(other, 'add', 'theirs.txt');
    git(other, 'commit', '-q', '-m', 'their work');
    git(other, 'push', '-q', remote, 'HEAD:refs/heads/codeloops/1-task-alpha-write-alpha');
    remoteBefore = git(remote, 'rev-parse', 'codeloops/1-task-alpha-write-alpha').trim();

    const run = async (args: string[]) => {
      const where = shardMachine(home, env);
      const bundle = path.join(tempDir('codeloops-bundles-'), 'shard.tar.gz');
      const result = await runCli(['queue', 'run', '--tasks', 'codeloops-queue.json', '--export', bundle, ...args], { cwd: where.clone, env: where.env });
      return { run: result, bundle, clone: where.clone, dataHome: where.dataHome };
    };
    [whole, leaky] = await Promise.all([
      run(['--shard', '1/1', '--push', remote]),
      run(['--shard', '1/3', '--push', `https://alice:${SECRET}@127.0.0.1:9/project.git`]),
    ]);
    assert.equal(whole.run.code, 0, whole.run.stderr);
    assert.equal(leaky.run.code, 0, leaky.run.stderr);
  });

  it('--push never moves a branch the remote has at another commit, and says why it was refused (not git’s hints)', () => {
    assert.equal(git(remote, 'rev-parse', 'codeloops/1-task-alpha-write-alpha').trim(), remoteBefore);
    assert.equal(
      git(remote, 'rev-parse', 'codeloops/3-task-gamma-write-gamma').trim(),
      git(whole.clone, 'rev-parse', 'codeloops/3-task-gamma-write-gamma').trim(),
    );
    const line = whole.run.stderr.split('\n').find((text) => text.startsWith('Task 1: pushing'));
    assert.ok(line, whole.run.stderr);
    assert.match(line, /failed: .*rejected/);
    assert.doesNotMatch(line, /hint:/);
  });

  it('--push to a URL with credentials: they are never printed, recorded in the queue or carried in the bundle', () => {
    assert.match(leaky.run.stderr, /Task 1: pushing codeloops\/1-task-alpha-write-alpha to https:\/\/\S*127\.0\.0\.1:9\/project\.git failed/);
    assert.ok(!leaky.run.stderr.includes(SECRET), leaky.run.stderr);
    assert.ok(!fs.readFileSync(queueFileOf(leaky.dataHome), 'utf8').includes(SECRET), 'the queue file keeps the credentials');
    const unpacked = tempDir('codeloops-unpacked-');
    execFileSync('tar', ['-xzf', leaky.bundle, '-C', unpacked]);
    assert.ok(!allText(unpacked).includes(SECRET), 'the bundle carries the credentials');
  });

  it('a queue import killed with kill -9 after it made the branches and sessions, before the queue recorded them: run again, it imports', async () => {
    // The queue's change lock held by a live process: the import waits there, its branches and sessions made.
    const lock = `${queueFileOf(dataHome)}.lock`;
    fs.writeFileSync(lock, JSON.stringify({ pid: process.pid, started_at: new Date().toISOString() }));
    const importing = startCli(['queue', 'import', whole.bundle, '--json'], { cwd: home, env });
    const sessions = path.join(dataHome, 'codeloops', 'sessions');
    const deadline = Date.now() + 8_000;
    while ((fs.existsSync(sessions) ? fs.readdirSync(sessions).filter((name) => name.endsWith('.jsonl')).length : 0) < 3 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 300));
    importing.child.kill('SIGKILL');
    await importing.done;
    fs.rmSync(lock);
    assert.equal(fs.readdirSync(sessions).filter((name) => name.endsWith('.jsonl')).length, 3, 'the import was killed at its worst moment');
    assert.deepEqual(
      queueOf(dataHome).tasks.map((task) => task.state),
      ['queued', 'queued', 'queued'],
    );

    const again = await runCli(['queue', 'import', whole.bundle, '--json'], { cwd: home, env });
    assert.equal(again.code, 0, again.stdout + again.stderr);
    const answer = JSON.parse(again.stdout) as ImportAnswer;
    assert.deepEqual(
      answer.imported.map((task) => [task.id, task.outcome]),
      [
        [1, 'success'],
        [2, 'success'],
        [3, 'success'],
      ],
    );
    assert.match(answer.warnings.join('\n'), /stopped midway/);
    assert.deepEqual(
      queueOf(dataHome).tasks.map((task) => [task.id, task.state, task.session_ids.length]),
      [
        [1, 'finished', 1],
        [2, 'finished', 1],
        [3, 'finished', 1],
      ],
    );
    assert.equal(fs.readdirSync(sessions).filter((name) => name.endsWith('.jsonl')).length, 3);
    const third = await runCli(['queue', 'import', whole.bundle, '--json'], { cwd: home, env });
    assert.equal(third.code, 0, third.stderr);
    assert.deepEqual((JSON.parse(third.stdout) as ImportAnswer).already_imported, [1, 2, 3]);

    // A prompt with escape sequences (a tasks file is anyone's): the report never prints them raw.
    const report = await runCli(['queue', 'report'], { cwd: home, env });
    assert.equal(report.code, 0, report.stderr);
    assert.match(report.stdout, /TASK-beta: write beta/);
    assert.ok(!report.stdout.includes('\u001b') && !report.stdout.includes('\u0007'), 'an escape sequence printed raw');
  });

  it('a task id no queue can count past, an invalid JSON tasks file, a branch "codeloops" in the way: each refused in words', async () => {
    const where = shardMachine(home, env);
    const file = JSON.parse(fs.readFileSync(path.join(home, 'codeloops-queue.json'), 'utf8')) as { tasks: Array<{ id: number }> };
    file.tasks = [{ ...file.tasks[0]!, id: Number.MAX_SAFE_INTEGER }];
    writeFile(where.clone, 'huge.json', JSON.stringify(file));
    const huge = await runCli(['queue', 'run', '--shard', '1/1', '--tasks', 'huge.json'], { cwd: where.clone, env: where.env });
    assert.equal(huge.code, 2, huge.stderr);
    assert.match(huge.stderr, /task id 9007199254740991/);
    assert.doesNotMatch(huge.stderr, /ZodError|at /);

    writeFile(where.clone, 'broken.json', '{"format": "codeloops-queue", "tasks": [\n');
    const broken = await runCli(['queue', 'run', '--shard', '1/1', '--tasks', 'broken.json'], { cwd: where.clone, env: where.env });
    assert.equal(broken.code, 2, broken.stderr);
    assert.match(broken.stderr, /broken\.json is not valid JSON/);

    const elsewhere = shardMachine(home, env);
    git(elsewhere.clone, 'branch', 'codeloops');
    const blocked = await runCli(['queue', 'import', whole.bundle, '--json'], { cwd: elsewhere.clone, env: elsewhere.env });
    assert.equal(blocked.code, 2, blocked.stderr);
    const error = (JSON.parse(blocked.stdout) as ImportAnswer).error!;
    assert.equal(error.code, 'branch_exists');
    assert.match(error.message, /branch codeloops is in the way/);
    assert.doesNotMatch(error.message, /meanwhile/);
  });
});
