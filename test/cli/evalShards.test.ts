import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as tar from 'tar';
import { evalRecordLineSchema, evalResultsSchema, evalsDir, type EvalResults } from '../../src/sessionFormat/evalRecords.js';
import { failureAnswerSchema } from '../../src/sessionFormat/failures.js';
import { bundleManifestSchema, evalMergeAnswerSchema, type BundleEval } from '../../src/sessionFormat/sessionBundle.js';
import { runCli, startCli } from '../support/cliProcess.js';
import { readJsonLines } from '../support/scriptedLoop.js';
import { git, removeTempDirs, tempDir } from '../support/testEnvironment.js';
import { evalSetup, fileAppears, tinyMathRepo } from '../support/tinyMathEval.js';

/**
 * An eval split over machines: each shard a process with its own clone of the project
 * and its own data folder and config (as a CI runner or a pod has), exporting a bundle;
 * the bundles merged into yet another clone. The suite: two tasks × two configs, one
 * repetition, four runs, with scripted agents whose outcomes do not depend on where
 * they run (see tinyMathEval.ts).
 */

type Machine = ReturnType<typeof evalSetup>;

function cloneOf(origin: string): string {
  const dir = path.join(tempDir('codeloops-clone-'), 'project');
  execFileSync('git', ['clone', '-q', origin, dir]);
  return dir;
}

function machine(origin: string, configs?: string): Machine {
  return evalSetup({ repetitions: 1, repo: cloneOf(origin), ...(configs ? { configs } : {}) });
}

/** What a user compares between two evals of the same plan: everything but ids, times and where the files are. */
function comparable(results: EvalResults) {
  return {
    suite: results.suite,
    configs: results.configs.map(({ mean_duration_secs: _duration, ...config }) => config),
    pairs: results.pairs,
    runs: results.runs.map(({ session_id: _session, duration_secs: _duration, ...run }) => run),
    complete: results.complete,
    missing_runs: results.missing_runs,
  };
}

async function runShard(m: Machine, shard: string, bundle: string, extra: string[] = []) {
  const result = await runCli(['eval', m.suite, '--shard', shard, '--export', bundle, ...extra], { cwd: m.repo, env: m.env });
  assert.equal(result.code, 0, result.stderr);
  assert.ok(fs.statSync(bundle).isFile(), `${bundle} written`);
  return result;
}

/** Resolves once the bundle's manifest says what is asked (read whole each time it changes: it is renamed into place). */
async function bundleSays(file: string, condition: (section: BundleEval) => boolean): Promise<void> {
  const read = async () => {
    const unpacked = tempDir('codeloops-bundle-manifest-');
    try {
      await tar.x({ file, cwd: unpacked, filter: (entry) => entry.endsWith('manifest.json') });
      const manifest = bundleManifestSchema.parse(JSON.parse(fs.readFileSync(path.join(unpacked, 'codeloops-bundle', 'manifest.json'), 'utf8')));
      return condition(manifest.eval!);
    } catch {
      return false;
    } finally {
      fs.rmSync(unpacked, { recursive: true, force: true });
    }
  };
  await new Promise<void>((resolve) => {
    const watcher = fs.watch(path.dirname(file), () => void check());
    let checking = false;
    let changedMeanwhile = false;
    const check = async () => {
      if (checking) return void (changedMeanwhile = true);
      checking = true;
      const met = await read();
      checking = false;
      if (met) {
        watcher.close();
        resolve();
      } else if (changedMeanwhile) {
        changedMeanwhile = false;
        void check();
      }
    };
    void check();
  });
}

function failureOf(stdout: string) {
  return failureAnswerSchema.parse(JSON.parse(stdout)).failure;
}

/** What a merge that refused left: no eval, no session, no snapshot ref. */
function assertNothingImported(m: Machine): void {
  assert.deepEqual(fs.existsSync(evalsDir({ XDG_DATA_HOME: m.home.dataHome })) ? fs.readdirSync(evalsDir({ XDG_DATA_HOME: m.home.dataHome })) : [], []);
  assert.deepEqual(fs.existsSync(m.home.sessionsDir) ? fs.readdirSync(m.home.sessionsDir) : [], []);
  assert.equal(git(m.repo, 'for-each-ref', 'refs/codeloops/'), '');
}

describe('codeloops eval across machines: shards exported, merged into one eval', function () {
  this.timeout(600_000);
  after(removeTempDirs);

  const origin = tinyMathRepo();
  const bundles = tempDir('codeloops-shard-bundles-');
  const bundle = (index: number) => path.join(bundles, `shard-${index}.tar.gz`);
  let single: EvalResults;

  before(async () => {
    // One machine, the whole eval: what the shards together must give.
    const alone = machine(origin);
    const result = await runCli(['eval', alone.suite, '--json'], { cwd: alone.repo, env: alone.env });
    assert.equal(result.code, 0, result.stderr);
    single = evalResultsSchema.parse(JSON.parse(result.stdout));
    // Three machines, a shard each, side by side.
    await Promise.all([1, 2, 3].map((index) => runShard(machine(origin), `${index}/3`, bundle(index))));
  });

  it('three shards merged give the runs, outcomes and rates (intervals included) of one machine', async () => {
    assert.equal(single.runs.length, 4);
    const home = machine(origin);
    const merged = await runCli(['eval', 'merge', bundle(1), bundle(2), bundle(3), '--json'], { cwd: home.repo, env: home.env });
    assert.equal(merged.code, 0, merged.stderr);
    const answer = evalMergeAnswerSchema.parse(JSON.parse(merged.stdout));
    assert.deepEqual(comparable(answer), comparable(single));
    assert.deepEqual(
      answer.shards.map((shard) => [shard.shard?.index, shard.runs, shard.complete]),
      [
        [1, 2, true],
        [2, 1, true],
        [3, 1, true],
      ],
    );
    // The merged eval is an eval here: its sessions listed, each re-homed to this clone with its snapshots.
    const listed = await runCli(['sessions', 'list', '--eval', answer.eval_id, '--json'], { cwd: home.repo, env: home.env });
    assert.equal(listed.code, 0, listed.stderr);
    const sessions = (JSON.parse(listed.stdout) as Array<{ id: string; working_dir: string }>).map((session) => session.id).sort();
    assert.deepEqual(sessions, answer.runs.map((run) => run.session_id!).sort());
    const accepted = answer.runs.find((run) => run.outcome === 'accepted')!;
    const replay = await runCli(['sessions', 'replay', accepted.session_id!, '--json'], { cwd: home.repo, env: home.env });
    assert.equal(replay.code, 0, replay.stderr);
    assert.ok(replay.stdout.includes('"imported"'), 'the replay says where the session came from');
    // Its changes put into this clone, conflict-checked and undoable, then rolled back.
    const apply = await runCli(['apply', accepted.session_id!, '--json'], { cwd: home.repo, env: home.env });
    assert.equal(apply.code, 0, apply.stderr + apply.stdout);
    assert.match(fs.readFileSync(path.join(home.repo, 'math.js'), 'utf8'), /a \+ b|a \* 2/);
    const rollback = await runCli(['rollback', accepted.session_id!, '--iteration', '1', '--json'], { cwd: home.repo, env: home.env });
    assert.equal(rollback.code, 0, rollback.stderr + rollback.stdout);
    assert.equal(fs.readFileSync(path.join(home.repo, 'math.js'), 'utf8'), 'export const sum = () => 0;\nexport const double = () => 0;\n');
  });

  it('a shard missing is said, not counted; a shard given twice is taken once; --resume runs only the missing runs, here', async () => {
    const home = machine(origin);
    const merged = await runCli(['eval', 'merge', bundle(1), bundle(3), bundle(3), '--json'], { cwd: home.repo, env: home.env });
    assert.equal(merged.code, 3, merged.stderr);
    const answer = evalMergeAnswerSchema.parse(JSON.parse(merged.stdout));
    assert.equal(answer.complete, false);
    const shardTwo = single.runs.filter((_run, index) => index % 3 === 1).map(({ task, config, repetition }) => ({ task, config, repetition }));
    assert.deepEqual(answer.missing_runs, shardTwo);
    assert.equal(answer.runs.length, 3);
    assert.equal(
      answer.configs.reduce((total, config) => total + config.runs, 0),
      3,
      'the figures count only the runs that are here',
    );
    assert.ok(
      answer.warnings.some((warning) => /shard-3\.tar\.gz again .*taken once/.test(warning)),
      answer.warnings.join('\n'),
    );
    assert.ok(
      answer.warnings.some((warning) => /no bundle of shard 2\/3/.test(warning)),
      answer.warnings.join('\n'),
    );
    assert.match(merged.stderr, new RegExp(`1 missing \\(run them here: codeloops eval --resume ${answer.eval_id}\\)`));

    const elsewhere = machine(origin);
    const report = path.join(tempDir('codeloops-merge-report-'), 'report.html');
    const markdown = await runCli(['eval', 'merge', bundle(1), '--html', report], { cwd: elsewhere.repo, env: elsewhere.env });
    assert.equal(markdown.code, 3);
    assert.match(markdown.stdout, /\*\*Incomplete: 2 runs missing, not counted in the figures/);
    const html = fs.readFileSync(report, 'utf8');
    assert.match(html, /<section class="scope incomplete"><p><strong>Incomplete: 2 runs missing/);
    assert.equal((html.match(/<li>task /g) ?? []).length, 2, 'the missing runs listed');

    const callsBefore = home.agent.calls('actor');
    const resumed = await runCli(['eval', '--resume', answer.eval_id, '--json'], { cwd: home.repo, env: home.env });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.ok(home.agent.calls('actor') - callsBefore >= 1, 'the missing run ran here');
    const lines = readJsonLines(path.join(evalsDir({ XDG_DATA_HOME: home.home.dataHome }), `${answer.eval_id}.jsonl`)).map((line) =>
      evalRecordLineSchema.parse(line),
    );
    assert.deepEqual(
      lines
        .filter((line) => line.type === 'run_started' && line.timestamp > lines.find((l) => l.type === 'eval_resumed')!.timestamp)
        .map((line) => line.type === 'run_started' && [line.task, line.config]),
      shardTwo.map((run) => [run.task, run.config]),
      'only the missing run started after the resume',
    );
    assert.deepEqual(comparable(evalResultsSchema.parse(JSON.parse(resumed.stdout))), comparable(single));
  });

  it('a shard killed midway (kill -9) leaves the bundle of the run it finished: merge refuses it (shard_incomplete) unless --partial; carried on where it ran, its new bundle completes the eval', async () => {
    const crashed = machine(origin);
    const partialBundle = path.join(tempDir('codeloops-crashed-shard-'), 'shard-1.tar.gz');
    // Shard 1/3 runs runs 1 and 4; the actor holds in run 4 (its second call), after run 1 finished.
    fs.writeFileSync(path.join(crashed.agent.dir, 'hold-at-2'), '');
    const shard = startCli(['eval', crashed.suite, '--shard', '1/3', '--export', partialBundle], { cwd: crashed.repo, env: crashed.env });
    await fileAppears(path.join(crashed.agent.dir, 'held'));
    await bundleSays(partialBundle, (section) => section.finished === 1);
    shard.child.kill('SIGKILL');
    process.kill(Number(fs.readFileSync(path.join(crashed.agent.dir, 'held-pid'), 'utf8')), 'SIGKILL');
    await shard.done;
    assert.deepEqual(fs.readdirSync(path.dirname(partialBundle)), ['shard-1.tar.gz'], 'no half-written bundle beside it');

    const home = machine(origin);
    const refused = await runCli(['eval', 'merge', partialBundle, bundle(2), bundle(3), '--json'], { cwd: home.repo, env: home.env });
    assert.equal(refused.code, 2, refused.stderr);
    const failure = failureOf(refused.stdout);
    assert.equal(failure.code, 'shard_incomplete');
    assert.deepEqual(failure.details.unfinished, [{ task: 'double', config: 'strict', repetition: 1 }]);
    assert.match(failure.hint ?? '', /--partial/);
    assertNothingImported(home);

    const partial = await runCli(['eval', 'merge', partialBundle, bundle(2), bundle(3), '--partial', '--json'], { cwd: home.repo, env: home.env });
    assert.equal(partial.code, 3, partial.stderr);
    assert.deepEqual(evalMergeAnswerSchema.parse(JSON.parse(partial.stdout)).missing_runs, [{ task: 'double', config: 'strict', repetition: 1 }]);

    // Where it ran: carried on, and its bundle written anew, whole.
    fs.rmSync(path.join(crashed.agent.dir, 'hold-at-2'));
    const resumed = await runCli(['eval', '--resume', 'latest', '--export', partialBundle], { cwd: crashed.repo, env: crashed.env });
    assert.equal(resumed.code, 0, resumed.stderr);
    await bundleSays(partialBundle, (section) => section.complete && section.finished === 2);
    const elsewhere = machine(origin);
    const whole = await runCli(['eval', 'merge', partialBundle, bundle(2), bundle(3), '--json'], { cwd: elsewhere.repo, env: elsewhere.env });
    assert.equal(whole.code, 0, whole.stderr);
    assert.deepEqual(comparable(evalMergeAnswerSchema.parse(JSON.parse(whole.stdout))), comparable(single));
  });

  it('refuses, importing nothing: bundles of different plans, of different shard counts, from another repository, torn or partial', async () => {
    const home = machine(origin);
    // Another plan: the strict config with another iteration limit.
    const other = machine(
      origin,
      `\n[[configs]]\nname = "lenient"\ncritic_model = "lenient"\n\n[[configs]]\nname = "strict"\ncritic_model = "strict"\nmax_iterations = 5\n`,
    );
    const otherBundle = path.join(bundles, 'other-plan.tar.gz');
    await runShard(other, '2/3', otherBundle);
    let refused = await runCli(['eval', 'merge', bundle(1), otherBundle, '--json'], { cwd: home.repo, env: home.env });
    assert.equal(refused.code, 2);
    let failure = failureOf(refused.stdout);
    assert.equal(failure.code, 'eval_mismatch');
    assert.deepEqual(failure.details.differences, ['config "strict" is set differently']);
    assertNothingImported(home);

    // Two shards of different N.
    const halves = path.join(bundles, 'half-1.tar.gz');
    await runShard(machine(origin), '1/2', halves);
    refused = await runCli(['eval', 'merge', bundle(2), halves, '--json'], { cwd: home.repo, env: home.env });
    failure = failureOf(refused.stdout);
    assert.equal(failure.code, 'eval_mismatch');
    assert.deepEqual(failure.details.differences, ['the number of shards: 3 against 2']);
    assertNothingImported(home);

    // Another repository: the commits the tasks start from are not here.
    const stranger = evalSetup({ repetitions: 1 });
    refused = await runCli(['eval', 'merge', bundle(1), '--json'], { cwd: stranger.repo, env: stranger.env });
    failure = failureOf(refused.stdout);
    assert.equal(failure.code, 'bundle_invalid');
    assert.match(failure.message, /from another repository/);
    assert.ok(Array.isArray(failure.details.missing_commits) && failure.details.missing_commits.length === 1);
    assertNothingImported(stranger);

    // Torn: the archive cut short.
    const torn = path.join(bundles, 'torn.tar.gz');
    fs.writeFileSync(torn, fs.readFileSync(bundle(1)).subarray(0, 600));
    refused = await runCli(['eval', 'merge', bundle(2), torn, '--json'], { cwd: home.repo, env: home.env });
    assert.equal(failureOf(refused.stdout).code, 'bundle_invalid');
    assertNothingImported(home);

    // Partial: a session its record finishes a run in is gone from it.
    const unpacked = tempDir('codeloops-partial-');
    await tar.x({ file: bundle(1), cwd: unpacked });
    const sessionsFolder = path.join(unpacked, 'codeloops-bundle', 'sessions');
    fs.rmSync(path.join(sessionsFolder, fs.readdirSync(sessionsFolder)[0]!));
    const manifestFile = path.join(unpacked, 'codeloops-bundle', 'manifest.json');
    const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as { sessions: Array<{ id: string }> };
    manifest.sessions = manifest.sessions.filter((entry) => fs.existsSync(path.join(sessionsFolder, `${entry.id}.jsonl`)));
    fs.writeFileSync(manifestFile, JSON.stringify(manifest));
    const partial = path.join(bundles, 'partial.tar.gz');
    await tar.c({ gzip: true, file: partial, cwd: unpacked }, ['codeloops-bundle']);
    refused = await runCli(['eval', 'merge', partial, bundle(2), '--json'], { cwd: home.repo, env: home.env });
    failure = failureOf(refused.stdout);
    assert.equal(failure.code, 'bundle_invalid');
    assert.match(failure.message, /which is not in it \(a partial bundle\)/);
    assertNothingImported(home);

    // No such file.
    refused = await runCli(['eval', 'merge', bundle(2), path.join(bundles, 'nothing-here.tar.gz'), '--json'], { cwd: home.repo, env: home.env });
    assert.equal(failureOf(refused.stdout).code, 'bundle_invalid');
    assertNothingImported(home);
  });

  it('--dry-run says which runs a shard runs and where its index came from (a Kubernetes Indexed Job, GitLab)', async () => {
    const m = machine(origin);
    const kubernetes = await runCli(['eval', m.suite, '--shard', 'auto/3', '--dry-run', '--json'], {
      cwd: m.repo,
      env: { ...m.env, JOB_COMPLETION_INDEX: '1' },
    });
    assert.equal(kubernetes.code, 0, kubernetes.stderr);
    const plan = JSON.parse(kubernetes.stdout) as { shard: unknown; shard_source: string; runs: Array<{ number: number }>; total_runs: number };
    assert.deepEqual(
      [plan.shard, plan.shard_source, plan.runs.map((run) => run.number), plan.total_runs],
      [{ index: 2, total: 3 }, 'JOB_COMPLETION_INDEX', [2], 4],
    );
    const gitlab = await runCli(['eval', m.suite, '--shard', 'auto', '--dry-run'], { cwd: m.repo, env: { ...m.env, CI_NODE_INDEX: '1', CI_NODE_TOTAL: '2' } });
    assert.equal(gitlab.code, 0, gitlab.stderr);
    assert.match(gitlab.stdout, /shard 1\/2 \(from CI_NODE_INDEX\) runs 2 of them/);
    assert.match(gitlab.stdout, /run 1: task "sum", config "lenient"/);
    assert.match(gitlab.stdout, /run 3: task "double", config "lenient"/);
    const bad = await runCli(['eval', m.suite, '--shard', 'auto/3', '--dry-run'], { cwd: m.repo, env: m.env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /needs JOB_COMPLETION_INDEX .* or CI_NODE_INDEX/);
    assert.equal(m.agent.calls('actor'), 0);
    assert.ok(!fs.existsSync(evalsDir({ XDG_DATA_HOME: m.home.dataHome })), 'a dry run records no eval');
  });
});
