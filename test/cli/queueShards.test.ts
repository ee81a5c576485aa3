import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CLI_ANSWERS } from '../../src/sessionFormat/cliAnswerIndex.js';
import { queueExportFileSchema, queueFileSchema, type QueueExportFile, type QueueFile } from '../../src/sessionFormat/queueRecords.js';
import { sourceDigest } from '../../src/queue/queueShards.js';
import { runCli, startCli, type CliResult } from '../support/cliProcess.js';
import { waitUntilGone } from '../support/processes.js';
import { queueSetup, shardMachine } from '../support/queueAgents.js';
import { git, removeTempDirs, tempDir, writeFile } from '../support/testEnvironment.js';

/**
 * A queue across machines: shards run as separate machines would (each its own clone,
 * its own data folder, at once), a bare repository standing in for the remote, their
 * bundles brought home with `queue import`.
 */

type Env = Record<string, string>;

function queueOf(dataHome: string): QueueFile {
  const folder = path.join(dataHome, 'codeloops', 'queues');
  const file = fs.readdirSync(folder).find((name) => name.endsWith('.json'))!;
  return queueFileSchema.parse(JSON.parse(fs.readFileSync(path.join(folder, file), 'utf8')));
}

/** Everything an import may change at home: the queue's file, the sessions and sidecars, every ref (branches, snapshots). */
function homeState(repo: string, dataHome: string) {
  const list = (folder: string) => (fs.existsSync(folder) ? fs.readdirSync(folder).sort() : []);
  const queues = path.join(dataHome, 'codeloops', 'queues');
  return {
    queue: list(queues)
      .filter((name) => name.endsWith('.json'))
      .map((name) => fs.readFileSync(path.join(queues, name), 'utf8')),
    sessions: list(path.join(dataHome, 'codeloops', 'sessions')),
    sidecars: list(path.join(dataHome, 'codeloops', 'sidecars')),
    refs: git(repo, 'for-each-ref', '--format=%(refname) %(objectname)'),
  };
}

function jsonOf<T>(result: CliResult): T {
  return JSON.parse(result.stdout) as T;
}

interface ImportAnswer {
  imported: { id: number; outcome: string; branch: string; commit: string | null; sessions: string[] }[];
  already_imported: number[];
  missing: { id: number; shard: string }[];
  unfinished: number[];
  queued: number[];
  branches: string[];
  sessions: string[];
  warnings: string[];
  error?: { code: string; message: string; details: Record<string, unknown> };
}

async function queueImport(repo: string, env: Env, ...args: string[]): Promise<{ code: number | null; json: ImportAnswer; stderr: string }> {
  const result = await runCli(['queue', 'import', ...args, '--json'], { cwd: repo, env });
  return { code: result.code, json: jsonOf<ImportAnswer>(result), stderr: result.stderr };
}

/** The bundle unpacked, changed by `edit` (given its `codeloops-bundle/` folder), packed again as a new file. */
function repacked(bundle: string, edit: (root: string) => void): string {
  const dir = tempDir('codeloops-repack-');
  execFileSync('tar', ['-xzf', bundle, '-C', dir]);
  edit(path.join(dir, 'codeloops-bundle'));
  const output = path.join(tempDir('codeloops-repacked-'), path.basename(bundle));
  execFileSync('tar', ['-czf', output, '-C', dir, 'codeloops-bundle']);
  return output;
}

function editJson(file: string, edit: (value: Record<string, unknown>) => void): void {
  const value = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  edit(value);
  fs.writeFileSync(file, JSON.stringify(value));
}

describe('cli: a queue across machines (queue export, run --shard, import)', function () {
  this.timeout(300_000);
  after(removeTempDirs);

  const TASKS = ['TASK-alpha: write alpha', 'TASK-broken: #fail at it', 'TASK-gamma: write gamma', 'TASK-delta: write delta'];
  let home: string;
  let env: Env;
  let dataHome: string;
  let remote: string;
  const bundles: Record<string, string> = {};
  const shardRuns: Record<string, CliResult> = {};
  const clones: Record<string, string> = {};

  before(async () => {
    const setup = queueSetup();
    ({ repo: home, env } = setup);
    dataHome = setup.home.dataHome;
    for (const prompt of TASKS) {
      const added = await runCli(['queue', 'add', '-p', prompt, '-n', '1'], { cwd: home, env });
      assert.equal(added.code, 0, added.stderr);
    }
    const exported = await runCli(['queue', 'export', '--json'], { cwd: home, env });
    assert.equal(exported.code, 0, exported.stderr);
    assert.deepEqual(jsonOf<{ tasks: number[] }>(exported).tasks, [1, 2, 3, 4]);
    git(home, 'add', 'codeloops-queue.json');
    git(home, 'commit', '-q', '-m', 'the queue, for the machines');
    remote = path.join(tempDir('codeloops-remote-'), 'remote.git');
    git(path.dirname(remote), 'init', '-q', '--bare', remote);

    // Shards 1/2 and 2/2 at once, as two machines; shard 3/3 of the same file (a run of another N) after.
    const run = async (shard: string, push: boolean, pushTo = remote) => {
      const where = shardMachine(home, env);
      clones[shard] = where.clone;
      bundles[shard] = path.join(tempDir('codeloops-bundles-'), `shard-${shard.replace('/', '-of-')}.tar.gz`);
      const args = [
        'queue',
        'run',
        '--shard',
        shard,
        '--tasks',
        'codeloops-queue.json',
        '--export',
        bundles[shard],
        ...(push || pushTo !== remote ? ['--push', pushTo] : []),
      ];
      shardRuns[shard] = await runCli(args, { cwd: where.clone, env: where.env });
    };
    await Promise.all([run('1/2', true), run('2/2', true)]);
    await run('3/3', false, path.join(tempDir('codeloops-no-remote-'), 'gone.git'));

    // A bundle of another repository's queue (a checklist there).
    const other = queueSetup();
    writeFile(other.repo, 'tasks.md', '- [ ] TASK-alpha: write alpha\n');
    git(other.repo, 'add', 'tasks.md');
    git(other.repo, 'commit', '-q', '-m', 'tasks');
    bundles.foreign = path.join(tempDir('codeloops-bundles-'), 'foreign.tar.gz');
    shardRuns.foreign = await runCli(['queue', 'run', '--shard', '1/1', '--tasks', 'tasks.md', '--export', bundles.foreign], {
      cwd: other.repo,
      env: other.env,
    });
  });

  it('each shard runs its share and pushes each success branch; queue import brings every task home, report and merge work on them', async () => {
    for (const shard of ['1/2', '2/2', '3/3', 'foreign']) assert.equal(shardRuns[shard]!.code, 0, shardRuns[shard]!.stderr);
    assert.match(shardRuns['1/2']!.stderr, /Shard 1\/2 \(--shard\): tasks 1, 3 of 4\./);
    assert.match(shardRuns['2/2']!.stderr, /Shard 2\/2 \(--shard\): tasks 2, 4 of 4\./);
    assert.match(shardRuns['1/2']!.stderr, /Task 1: pushed codeloops\/1-task-alpha-write-alpha to /);
    assert.match(shardRuns['3/3']!.stderr, /Shard 3\/3 \(--shard\): tasks 3 of 4\./);
    // A push that fails is said, recorded on the task and in the bundle; the shard still ends well.
    assert.match(shardRuns['3/3']!.stderr, /Task 3: pushing codeloops\/3-task-gamma-write-gamma to \S+gone\.git failed: /);
    const unpacked = tempDir('codeloops-unpacked-');
    execFileSync('tar', ['-xzf', bundles['3/3']!, '-C', unpacked]);
    const manifest = JSON.parse(fs.readFileSync(path.join(unpacked, 'codeloops-bundle', 'manifest.json'), 'utf8')) as {
      queue: { complete: boolean; tasks: Array<{ id: number; push: { pushed: boolean; error: string | null } | null }> };
    };
    assert.equal(manifest.queue.complete, true);
    assert.equal(manifest.queue.tasks[0]!.push?.pushed, false);
    assert.ok(manifest.queue.tasks[0]!.push?.error);

    // Each success branch arrives in the remote, at the commit its shard made; the failure's does not.
    const pushed = git(remote, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads/').trim().split('\n').sort();
    assert.deepEqual(pushed, [
      `codeloops/1-task-alpha-write-alpha ${git(clones['1/2']!, 'rev-parse', 'codeloops/1-task-alpha-write-alpha').trim()}`,
      `codeloops/3-task-gamma-write-gamma ${git(clones['1/2']!, 'rev-parse', 'codeloops/3-task-gamma-write-gamma').trim()}`,
      `codeloops/4-task-delta-write-delta ${git(clones['2/2']!, 'rev-parse', 'codeloops/4-task-delta-write-delta').trim()}`,
    ]);

    // Shard 1/2 given twice is taken once.
    const imported = await queueImport(home, env, bundles['1/2']!, bundles['2/2']!, bundles['1/2']!);
    assert.equal(imported.code, 0, imported.stderr);
    assert.deepEqual(
      imported.json.imported.map((task) => [task.id, task.outcome]),
      [
        [1, 'success'],
        [3, 'success'],
        [2, 'max_iterations_reached'],
        [4, 'success'],
      ],
    );
    // The answer is the one CLI_ANSWERS declares, every field of it.
    const declared = CLI_ANSWERS['queue import'].schema.parse(imported.json);
    assert.deepEqual(Object.keys(imported.json).sort(), Object.keys(declared).sort());
    assert.deepEqual(Object.keys(imported.json.imported[0]!).sort(), Object.keys(declared.imported[0]!).sort());
    assert.deepEqual(imported.json.missing, []);
    assert.deepEqual(imported.json.queued, []);
    assert.match(imported.json.warnings.join('\n'), /shard 1\/2 was given twice/);
    assert.equal(imported.json.sessions.length, 4);
    const queue = queueOf(dataHome);
    assert.deepEqual(
      queue.tasks.map((task) => [task.id, task.state, task.outcome]),
      [
        [1, 'finished', 'success'],
        [2, 'finished', 'max_iterations_reached'],
        [3, 'finished', 'success'],
        [4, 'finished', 'success'],
      ],
    );
    assert.equal(queue.tasks[0]!.push?.pushed, true);
    for (const task of queue.tasks.filter((entry) => entry.outcome === 'success'))
      assert.equal(git(home, 'rev-parse', task.branch).trim(), task.commit, `${task.branch} is made at home`);

    const report = await runCli(['queue', 'report'], { cwd: home, env });
    assert.equal(report.code, 0, report.stderr);
    for (const [index, prompt] of TASKS.entries()) assert.match(report.stdout, new RegExp(`\\| ${index + 1} \\| ${prompt} \\|`));
    assert.match(report.stdout, /Totals: 4 tasks, 3 succeeded, 1 did not/);
    assert.match(report.stdout, /Pushed to \S+remote\.git\./);
    assert.match(report.stdout, /Ran elsewhere: imported from shard-2-of-2\.tar\.gz \(shard 2\/2\)\./);
    const sessions = await runCli(['sessions', 'list', '--json'], { cwd: home, env });
    assert.equal(jsonOf<unknown[]>(sessions).length, 4);

    const merged = await runCli(['queue', 'merge', '3', '--json'], { cwd: home, env });
    assert.equal(merged.code, 0, merged.stderr);
    assert.equal(jsonOf<{ status: string }>(merged).status, 'merged');
    assert.equal(fs.readFileSync(path.join(home, 'gamma.txt'), 'utf8'), 'gamma\n');

    // Again: recorded already, nothing made twice.
    const again = await queueImport(home, env, bundles['1/2']!, bundles['2/2']!);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(again.json.imported, []);
    assert.deepEqual(again.json.already_imported.sort(), [1, 2, 3, 4]);
  });

  it('refuses, importing nothing: another repository’s bundle, a corrupt or partial one, shards of different N, one that lies about its tasks or branches', async () => {
    const refusals: Array<[string, string[], string, RegExp]> = [];
    refusals.push(['another repository', [bundles.foreign!], 'bundle_invalid', /does not have/]);
    const truncated = path.join(tempDir('codeloops-bad-'), 'truncated.tar.gz');
    fs.writeFileSync(truncated, fs.readFileSync(bundles['1/2']!).subarray(0, 600));
    refusals.push(['a truncated bundle', [truncated], 'bundle_invalid', /cannot be imported/]);
    const noBranches = repacked(bundles['1/2']!, (root) => fs.rmSync(path.join(root, 'queue', 'branches.bundle')));
    refusals.push(['a bundle without its branches', [noBranches], 'bundle_invalid', /has no queue\/branches\.bundle/]);
    const noTasks = repacked(bundles['1/2']!, (root) => fs.rmSync(path.join(root, 'queue', 'tasks.json')));
    refusals.push(['a bundle without its tasks', [noTasks], 'bundle_invalid', /queue\/tasks\.json cannot be read/]);
    refusals.push(['shards of different N', [bundles['1/2']!, bundles['3/3']!], 'queue_mismatch', /is shard 3\/3, .* shard 1\/2/]);
    // Its manifest names a task its records do not hold.
    const strayTask = repacked(bundles['2/2']!, (root) =>
      editJson(path.join(root, 'manifest.json'), (manifest) => {
        const queue = manifest.queue as { tasks: Array<{ id: number }> };
        queue.tasks.push({ ...queue.tasks[0]!, id: 99 });
      }),
    );
    refusals.push(['a manifest naming a task not in the bundle', [strayTask], 'bundle_invalid', /names tasks its queue\/tasks\.json does not hold/]);
    // A task that claims a branch outside codeloops/ (the user's main).
    const mainBranch = repacked(bundles['2/2']!, (root) => {
      editJson(path.join(root, 'queue', 'tasks.json'), (tasks) => {
        (tasks.records as Array<{ id: number; branch: string }>).find((task) => task.id === 4)!.branch = 'main';
      });
      editJson(path.join(root, 'manifest.json'), (manifest) => {
        (manifest.queue as { tasks: Array<{ id: number; branch: string }> }).tasks.find((task) => task.id === 4)!.branch = 'main';
      });
    });
    refusals.push(['a task whose branch is main', [mainBranch], 'bundle_invalid', /names the branch main, not its own/]);
    // A git bundle of branches that carries a branch of no task.
    const extraBranch = repacked(bundles['2/2']!, (root) => {
      const clone = clones['2/2']!;
      git(clone, 'branch', '-f', 'main-too', 'codeloops/4-task-delta-write-delta');
      const base = git(clone, 'rev-parse', 'codeloops/4-task-delta-write-delta^').trim();
      fs.rmSync(path.join(root, 'queue', 'branches.bundle'));
      git(
        clone,
        'bundle',
        'create',
        '-q',
        path.join(root, 'queue', 'branches.bundle'),
        'refs/heads/codeloops/4-task-delta-write-delta',
        'refs/heads/main-too',
        '--not',
        base,
      );
    });
    refusals.push(['a branch of no task', [extraBranch], 'bundle_invalid', /its branches name refs\/heads\/main-too/]);

    for (const [what, files, code, message] of refusals) {
      const before = homeState(home, dataHome);
      const refused = await queueImport(home, env, ...files);
      assert.equal(refused.code, 2, `${what}: ${refused.stderr}`);
      assert.equal(refused.json.error?.code, code, `${what}: ${JSON.stringify(refused.json.error)}`);
      assert.match(refused.json.error!.message, message, what);
      assert.deepEqual(homeState(home, dataHome), before, `${what}: nothing imported`);
    }
  });

  it('a task a bundle queues here never brings its checks (shell commands) with it: queued without them, and said', async () => {
    // A crafted bundle: a task 5 (shard 1's, which is not given) whose flags run a command.
    const crafted = repacked(bundles['2/2']!, (root) => {
      let digest = '';
      editJson(path.join(root, 'queue', 'tasks.json'), (tasks) => {
        const source = tasks.source as QueueExportFile;
        source.tasks.push({ id: 5, prompt: 'TASK-epsilon: write epsilon', flags: { check: ['touch PWNED'], maxIterations: 1 } });
        digest = sourceDigest(queueExportFileSchema.parse(source));
      });
      editJson(path.join(root, 'manifest.json'), (manifest) => {
        const queue = manifest.queue as { source: string; task_ids: number[] };
        queue.source = digest;
        queue.task_ids.push(5);
      });
    });
    const elsewhere = shardMachine(home, env);
    const imported = await queueImport(elsewhere.clone, elsewhere.env, crafted);
    assert.equal(imported.code, 0, imported.stderr);
    const task = queueOf(elsewhere.dataHome).tasks.find((candidate) => candidate.id === 5)!;
    assert.equal(task.state, 'queued');
    assert.deepEqual(task.flags, { maxIterations: 1 });
    assert.ok(
      imported.json.warnings.some((warning) => /task 5 is queued here without the checks its bundle gave it/.test(warning)),
      imported.json.warnings.join('\n'),
    );
  });

  it('a shard killed between two tasks leaves the bundle of the task that finished, which says so: refused, or with --partial imported', async () => {
    const { repo, env: homeEnv, agent, home: homeDirs } = queueSetup();
    for (const prompt of ['TASK-alpha: write alpha', 'TASK-held: #hold then write', 'TASK-gamma: write gamma'])
      assert.equal((await runCli(['queue', 'add', '-p', prompt], { cwd: repo, env: homeEnv })).code, 0);
    assert.equal((await runCli(['queue', 'export', '-o', 'tasks.json'], { cwd: repo, env: homeEnv })).code, 0);
    git(repo, 'add', 'tasks.json');
    git(repo, 'commit', '-q', '-m', 'tasks');
    const where = shardMachine(repo, homeEnv);
    const bundle = path.join(tempDir('codeloops-bundles-'), 'crashed.tar.gz');
    const running = startCli(['queue', 'run', '--shard', '1/1', '--tasks', 'tasks.json', '--export', bundle], { cwd: where.clone, env: where.env });
    await running.waitForStderr(/Task 2: started/);
    const heldFile = path.join(agent.dir, 'held');
    while (!fs.existsSync(heldFile) || fs.readFileSync(heldFile, 'utf8') === '') await new Promise((resolve) => setTimeout(resolve, 20));
    running.child.kill('SIGKILL');
    await running.done;
    const agentPid = Number(fs.readFileSync(heldFile, 'utf8'));
    process.kill(-agentPid, 'SIGKILL');
    assert.ok(await waitUntilGone(agentPid));

    const before = homeState(repo, homeDirs.dataHome);
    const refused = await queueImport(repo, homeEnv, bundle);
    assert.equal(refused.json.error?.code, 'shard_incomplete', refused.stderr);
    assert.deepEqual(refused.json.error?.details.unfinished, [2, 3]);
    assert.deepEqual(homeState(repo, homeDirs.dataHome), before);

    // A branch of the task's name here at another commit is never moved: refused, nothing imported.
    git(repo, 'branch', 'codeloops/1-task-alpha-write-alpha', 'HEAD');
    const taken = await queueImport(repo, homeEnv, bundle, '--partial');
    assert.equal(taken.json.error?.code, 'branch_exists', taken.stderr);
    assert.deepEqual(taken.json.error?.details.branches, ['codeloops/1-task-alpha-write-alpha']);
    git(repo, 'branch', '-D', 'codeloops/1-task-alpha-write-alpha');
    assert.deepEqual(homeState(repo, homeDirs.dataHome), before);

    const partial = await queueImport(repo, homeEnv, bundle, '--partial');
    assert.equal(partial.code, 0, partial.stderr);
    assert.deepEqual(
      partial.json.imported.map((task) => [task.id, task.outcome]),
      [[1, 'success']],
    );
    assert.deepEqual(partial.json.unfinished, [2, 3]);
    assert.deepEqual(
      queueOf(homeDirs.dataHome).tasks.map((task) => [task.id, task.state, task.outcome]),
      [
        [1, 'finished', 'success'],
        [2, 'queued', null],
        [3, 'queued', null],
      ],
    );
    const report = await runCli(['queue', 'report'], { cwd: repo, env: homeEnv });
    assert.match(report.stdout, /\| 1 \| TASK-alpha: write alpha \| success/);
    assert.match(report.stdout, /\| 2 \| TASK-held: #hold then write \| queued/);
  });
});
