import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as tar from 'tar';
import { evalsDir } from '../../src/sessionFormat/evalRecords.js';
import { failureAnswerSchema } from '../../src/sessionFormat/failures.js';
import { evalMergeAnswerSchema } from '../../src/sessionFormat/sessionBundle.js';
import { runCli } from '../support/cliProcess.js';
import { git, removeTempDirs, tempDir } from '../support/testEnvironment.js';
import { evalSetup, tinyMathRepo } from '../support/tinyMathEval.js';

/**
 * `eval --shard … --export` and `eval merge` attacked: odd shard options, crafted
 * bundles, a merge into a repository with the user's own things in it, and a merge
 * that died before it wrote its record. The suite: one task, two configs whose critic
 * says DONE at once, one repetition: two runs, a shard each.
 */

type Machine = ReturnType<typeof evalSetup>;

const EASY_CONFIGS = `
[[configs]]
name = "lenient"
critic_model = "lenient"

[[configs]]
name = "easy"
critic_model = "lenient"
`;

function cloneOf(origin: string): string {
  const dir = path.join(tempDir('codeloops-clone-'), 'project');
  execFileSync('git', ['clone', '-q', origin, dir]);
  return dir;
}

function machine(origin: string): Machine {
  return evalSetup({ repetitions: 1, sumOnly: true, configs: EASY_CONFIGS, repo: cloneOf(origin) });
}

function failureOf(stdout: string) {
  return failureAnswerSchema.parse(JSON.parse(stdout)).failure;
}

function evalFiles(m: Machine): string[] {
  const folder = evalsDir({ XDG_DATA_HOME: m.home.dataHome });
  return fs.existsSync(folder) ? fs.readdirSync(folder) : [];
}

function sessionFiles(m: Machine): string[] {
  return fs.existsSync(m.home.sessionsDir) ? fs.readdirSync(m.home.sessionsDir).sort() : [];
}

/** A bundle unpacked, changed by `edit` (given its `codeloops-bundle/` folder), and packed again as `name`. */
async function crafted(from: string, name: string, edit: (root: string) => void): Promise<string> {
  const unpacked = tempDir('codeloops-crafted-');
  await tar.x({ file: from, cwd: unpacked });
  edit(path.join(unpacked, 'codeloops-bundle'));
  const file = path.join(tempDir('codeloops-crafted-out-'), name);
  await tar.c({ gzip: true, file, cwd: unpacked }, ['codeloops-bundle']);
  return file;
}

function recordLines(root: string): Array<Record<string, unknown>> {
  return fs
    .readFileSync(path.join(root, 'eval', 'record.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function writeRecord(root: string, lines: ReadonlyArray<Record<string, unknown>>): void {
  fs.writeFileSync(path.join(root, 'eval', 'record.jsonl'), lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
}

describe('codeloops eval shards attacked: odd options, crafted bundles, the user repository, a merge cut short', function () {
  this.timeout(600_000);
  after(removeTempDirs);

  const origin = tinyMathRepo();
  const bundles = tempDir('codeloops-attack-bundles-');
  const bundle = (index: number) => path.join(bundles, `shard-${index}.tar.gz`);

  before(async () => {
    await Promise.all(
      [1, 2].map(async (index) => {
        const m = machine(origin);
        const result = await runCli(['eval', m.suite, '--shard', `${index}/2`, '--export', bundle(index)], { cwd: m.repo, env: m.env });
        assert.equal(result.code, 0, result.stderr);
      }),
    );
  });

  it('odd --shard values and --export paths are refused before anything runs, each saying what is wrong', async () => {
    const m = machine(origin);
    const refused = async (args: string[], env: Record<string, string>, pattern: RegExp) => {
      const result = await runCli(['eval', m.suite, ...args], { cwd: m.repo, env: { ...m.env, ...env } });
      assert.equal(result.code, 2, `${args.join(' ')} ${JSON.stringify(env)}: ${result.stderr}`);
      assert.match(result.stderr, pattern, `${args.join(' ')} ${JSON.stringify(env)}`);
    };
    await refused(['--shard', '1/0', '--dry-run'], {}, /number of shards must be 1 to/);
    await refused(['--shard', '3/2', '--dry-run'], {}, /the shard must be 1 to 2/);
    await refused(['--shard', '0/2', '--dry-run'], {}, /shards count from 1/);
    await refused(['--shard', ' 1/2', '--dry-run'], {}, /is not a shard/);
    await refused(['--shard', '-1/2', '--dry-run'], {}, /is not a shard/);
    await refused(['--shard', '1/2/3', '--dry-run'], {}, /is not a shard/);
    await refused(['--shard', '1/1001', '--dry-run'], {}, /number of shards must be 1 to 1000/);
    await refused(['--shard', 'auto/0', '--dry-run'], { JOB_COMPLETION_INDEX: '0' }, /number of shards must be 1 to/);
    await refused(['--shard', 'auto/4', '--dry-run'], { JOB_COMPLETION_INDEX: '99' }, /JOB_COMPLETION_INDEX=99 .*the shard must be 1 to 4/);
    // Set, but not a number: the message must not say it is not set.
    await refused(['--shard', 'auto/4', '--dry-run'], { JOB_COMPLETION_INDEX: 'abc' }, /JOB_COMPLETION_INDEX.*"abc"/);
    await refused(['--shard', 'auto', '--dry-run'], { CI_NODE_INDEX: 'x', CI_NODE_TOTAL: '2' }, /CI_NODE_INDEX.*"x"/);
    await refused(['--shard', '1/2', '--export', bundles], {}, /is a folder/);
    await refused(['--shard', '1/2', '--export', path.join(bundles, 'missing', 'b.tar.gz')], {}, /does not exist/);
    const resumed = await runCli(['eval', '--resume', 'latest', '--shard', '1/2'], { cwd: m.repo, env: m.env });
    assert.equal(resumed.code, 2, resumed.stderr);
    assert.match(resumed.stderr, /leave out --shard/);
    // "01/2" is shard 1 of 2.
    const padded = await runCli(['eval', m.suite, '--shard', '01/2', '--dry-run', '--json'], { cwd: m.repo, env: m.env });
    assert.equal(padded.code, 0, padded.stderr);
    assert.deepEqual((JSON.parse(padded.stdout) as { shard: unknown }).shard, { index: 1, total: 2 });
    assert.equal(m.agent.calls('actor'), 0);
    assert.deepEqual(evalFiles(m), []);
  });

  it('merge: --html into a missing folder, no bundle, a FIFO, and one bundle fifty times', async () => {
    const home = machine(origin);
    let result = await runCli(['eval', 'merge', bundle(1), bundle(2), '--html', path.join(home.repo, 'no', 'such', 'report.html')], {
      cwd: home.repo,
      env: home.env,
    });
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /does not exist/);
    assert.deepEqual([evalFiles(home), sessionFiles(home)], [[], []]);

    result = await runCli(['eval', 'merge'], { cwd: home.repo, env: home.env });
    assert.equal(result.code, 2, result.stderr);

    const fifo = path.join(tempDir('codeloops-fifo-'), 'shard.tar.gz');
    execFileSync('mkfifo', [fifo]);
    result = await runCli(['eval', 'merge', bundle(1), fifo, '--json'], { cwd: home.repo, env: home.env, timeoutMs: 60_000 });
    assert.equal(result.timedOut, false, 'a FIFO given as a bundle does not hang the merge');
    assert.equal(failureOf(result.stdout).code, 'bundle_invalid');
    assert.deepEqual([evalFiles(home), sessionFiles(home)], [[], []]);

    const fifty = Array.from({ length: 50 }, () => bundle(1));
    result = await runCli(['eval', 'merge', ...fifty, bundle(2), '--json'], { cwd: home.repo, env: home.env });
    assert.equal(result.code, 0, result.stderr);
    const answer = evalMergeAnswerSchema.parse(JSON.parse(result.stdout));
    assert.equal(answer.runs.length, 2);
    assert.equal(answer.warnings.filter((warning) => /taken once/.test(warning)).length, 49);
    assert.equal(sessionFiles(home).length, 2);
  });

  it("merged into the user's repository: their branches, stash, untracked files and a session of the same id stay; the bundled one is renamed, and deleting it removes only its refs", async () => {
    const home = machine(origin);
    // The user's own things.
    git(home.repo, 'branch', 'mine');
    fs.writeFileSync(path.join(home.repo, 'math.js'), 'export const sum = (a, b) => a + b + 0;\n');
    git(home.repo, 'stash');
    fs.writeFileSync(path.join(home.repo, 'notes.txt'), 'my notes\n');
    // A session of theirs that has the id a shard's session has.
    const unpacked = tempDir('codeloops-peek-');
    await tar.x({ file: bundle(1), cwd: unpacked });
    const [bundledFile] = fs.readdirSync(path.join(unpacked, 'codeloops-bundle', 'sessions'));
    const id = bundledFile!.replace(/\.jsonl$/, '');
    fs.mkdirSync(home.home.sessionsDir, { recursive: true });
    const theirs = fs.readFileSync(path.join(unpacked, 'codeloops-bundle', 'sessions', bundledFile!), 'utf8') + '{"type":"mine"}\n';
    fs.writeFileSync(path.join(home.home.sessionsDir, bundledFile!), theirs);
    const head = git(home.repo, 'rev-parse', 'HEAD').trim();
    git(home.repo, 'update-ref', `refs/codeloops/${id}/head`, head);
    const before = {
      branches: git(home.repo, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads/', 'refs/stash'),
      stash: git(home.repo, 'stash', 'list'),
      status: git(home.repo, 'status', '--porcelain'),
    };

    const merged = await runCli(['eval', 'merge', bundle(1), bundle(2), '--json'], { cwd: home.repo, env: home.env });
    assert.equal(merged.code, 0, merged.stderr);
    const answer = evalMergeAnswerSchema.parse(JSON.parse(merged.stdout));
    const ids = answer.runs.map((run) => run.session_id!);
    assert.ok(!ids.includes(id), `the bundled ${id} is renamed: ${ids.join(', ')}`);
    assert.equal(fs.readFileSync(path.join(home.home.sessionsDir, bundledFile!), 'utf8'), theirs, 'their session is untouched');
    assert.equal(git(home.repo, 'for-each-ref', '--format=%(refname) %(objectname)', `refs/codeloops/${id}/`).trim(), `refs/codeloops/${id}/head ${head}`);
    assert.deepEqual(
      {
        branches: git(home.repo, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads/', 'refs/stash'),
        stash: git(home.repo, 'stash', 'list'),
        status: git(home.repo, 'status', '--porcelain'),
      },
      before,
    );
    const renamed = ids.find((candidate) => candidate.endsWith(id.slice(id.indexOf('_'))))!;
    assert.ok(renamed, 'the renamed session keeps its suffix');
    assert.notEqual(git(home.repo, 'for-each-ref', `refs/codeloops/${renamed}/`).trim(), '', 'its snapshots came under its new id');
    const replay = await runCli(['sessions', 'replay', renamed, '--json'], { cwd: home.repo, env: home.env });
    assert.equal(replay.code, 0, replay.stderr);

    const deleted = await runCli(['sessions', 'delete', renamed, '--json'], { cwd: home.repo, env: home.env });
    assert.equal(deleted.code, 0, deleted.stderr + deleted.stdout);
    assert.equal(git(home.repo, 'for-each-ref', `refs/codeloops/${renamed}/`).trim(), '');
    assert.equal(git(home.repo, 'for-each-ref', '--format=%(refname) %(objectname)', `refs/codeloops/${id}/`).trim(), `refs/codeloops/${id}/head ${head}`);
    assert.equal(fs.readFileSync(path.join(home.home.sessionsDir, bundledFile!), 'utf8'), theirs);
    const other = ids.find((candidate) => candidate !== renamed)!;
    assert.notEqual(git(home.repo, 'for-each-ref', `refs/codeloops/${other}/`).trim(), '', "the other run's snapshots stay");
  });

  // Broken, not fixed: the second merge finds the first one's sessions here and imports every session again under the next free ids,
  // leaving the first copies as sessions of no eval. Skipped until a merge recognises its own earlier import (or refuses, naming it).
  it('a merge that died after importing, before its record, merged again: one copy of each session, or a refusal that says what to do', async () => {
    const home = machine(origin);
    const first = await runCli(['eval', 'merge', bundle(1), bundle(2), '--json'], { cwd: home.repo, env: home.env });
    assert.equal(first.code, 0, first.stderr);
    // What kill -9 between the import and the record leaves: the sessions and their refs, no eval.
    for (const file of evalFiles(home)) fs.rmSync(path.join(evalsDir({ XDG_DATA_HOME: home.home.dataHome }), file));
    const sessionsBefore = sessionFiles(home);
    const refsBefore = git(home.repo, 'for-each-ref', 'refs/codeloops/');

    const again = await runCli(['eval', 'merge', bundle(1), bundle(2), '--json'], { cwd: home.repo, env: home.env });
    if (again.code === 0) {
      const answer = evalMergeAnswerSchema.parse(JSON.parse(again.stdout));
      assert.deepEqual(
        answer.runs.map((run) => run.session_id!).sort(),
        sessionsBefore.map((file) => file.replace(/\.jsonl$/, '')),
      );
      assert.deepEqual(sessionFiles(home), sessionsBefore, 'no second copy of the sessions');
      assert.equal(git(home.repo, 'for-each-ref', 'refs/codeloops/'), refsBefore);
    } else {
      const failure = failureOf(again.stdout);
      assert.equal(failure.code, 'session_exists');
      assert.match(failure.message, /sessions delete|already imported/);
    }
  });

  it('crafted bundles are refused, importing nothing: two runs in one session, a path in a session id, two eval_started, a huge record', async () => {
    const home = machine(origin);
    const refusedAlone = async (file: string, pattern: RegExp) => {
      const result = await runCli(['eval', 'merge', file, bundle(2), '--json'], { cwd: home.repo, env: home.env });
      assert.equal(result.code, 2, `${path.basename(file)}: ${result.stderr}${result.stdout}`);
      const failure = failureOf(result.stdout);
      assert.equal(failure.code, 'bundle_invalid', failure.message);
      assert.match(failure.message, pattern);
      assert.deepEqual([evalFiles(home), sessionFiles(home), git(home.repo, 'for-each-ref', 'refs/codeloops/')], [[], [], '']);
    };

    // Shard 1/1's bundle claims both runs finished in one session.
    const wholeRun = machine(origin);
    const whole = path.join(bundles, 'whole.tar.gz');
    const ran = await runCli(['eval', wholeRun.suite, '--shard', '1/1', '--export', whole], { cwd: wholeRun.repo, env: wholeRun.env });
    assert.equal(ran.code, 0, ran.stderr);
    const oneSession = await crafted(whole, 'one-session.tar.gz', (root) => {
      const lines = recordLines(root);
      const finished = lines.filter((line) => line.type === 'run_finished');
      for (const line of finished) line.session_id = finished[0]!.session_id;
      writeRecord(root, lines);
    });
    const result = await runCli(['eval', 'merge', oneSession, '--json'], { cwd: home.repo, env: home.env });
    if (result.code === 2) assert.equal(failureOf(result.stdout).code, 'bundle_invalid');
    else {
      // Taken: then every run the record names has its session here.
      const answer = evalMergeAnswerSchema.parse(JSON.parse(result.stdout));
      for (const run of answer.runs)
        assert.ok(fs.existsSync(path.join(home.home.sessionsDir, `${run.session_id}.jsonl`)), `${run.session_id} of the merged record is here`);
      assert.fail('a record whose two runs finished in one session is taken');
    }
    assert.deepEqual([evalFiles(home), sessionFiles(home)], [[], []]);

    await refusedAlone(
      await crafted(bundle(1), 'dotdot.tar.gz', (root) => {
        const lines = recordLines(root);
        for (const line of lines) if (line.type === 'run_finished') line.session_id = '../../../etc/passwd';
        writeRecord(root, lines);
      }),
      /not in it|not a session id/,
    );
    await refusedAlone(
      await crafted(bundle(1), 'two-starts.tar.gz', (root) => {
        const lines = recordLines(root);
        const started = lines.find((line) => line.type === 'eval_started')!;
        writeRecord(root, [started, { ...started, shard: { index: 2, total: 2 } }, ...lines.slice(1)]);
      }),
      /eval_started|starts .* twice/,
    );
    await refusedAlone(
      await crafted(bundle(1), 'huge.tar.gz', (root) => {
        const fd = fs.openSync(path.join(root, 'eval', 'record.jsonl'), 'a');
        const block = Buffer.alloc(8 * 1024 * 1024, 0x20);
        for (let written = 0; written < 600; written += 8) fs.writeSync(fd, block);
        fs.closeSync(fd);
      }),
      /record\.jsonl.*larger than/,
    );
  });
});
