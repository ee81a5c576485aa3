import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { applyOutcomeSchema } from '../../src/sessionFormat/applyOutcome.js';
import { groupComparisonSchema } from '../../src/sessionFormat/candidateGroups.js';
import { rollbackOutcomeSchema } from '../../src/sessionFormat/rollbackOutcome.js';
import { exportResultSchema, importResultSchema } from '../../src/sessionFormat/sessionBundle.js';
import { runCli } from '../support/cliProcess.js';
import { configureScriptedAgent, done, type AgentScript } from '../support/scriptedAgent.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo, git, isolateHome, removeTempDirs, tempDir, treeOf, writeFile } from '../support/testEnvironment.js';

/** A machine of its own: its own codeloops data and config, the scripted agent in both roles. */
function machine(script: AgentScript) {
  const home = isolateHome();
  home.restore();
  const agent = configureScriptedAgent(home.configHome, script);
  return { home, agent, env: home.env };
}

/** The repository on a laptop, and a clone of it on a CI runner. */
function repositoryAndClone() {
  const laptop = createRepo({ files: { 'README.md': '# project\n', 'src/app.txt': 'v1\n' } });
  const ci = path.join(tempDir('codeloops-ci-'), 'project');
  git(path.dirname(ci), 'clone', '-q', laptop, ci);
  return { laptop, ci };
}

function refsIn(repo: string): string[] {
  return git(repo, 'for-each-ref', '--format=%(refname)', 'refs/codeloops/').split('\n').filter(Boolean);
}

describe('sessions export and import (bundles between clones)', () => {
  after(removeTempDirs);

  it('a run and a candidate group made in another clone are viewed, replayed, applied and rolled back here', async () => {
    const { laptop, ci } = repositoryAndClone();
    const runner = machine({
      actor: [[{ write: { path: 'src/app.txt', content: 'v2\n' } }]],
      critic: [[done('bumped', 0.9)]],
      candidates: {
        'command#1': { actor: [[{ write: { path: 'CHANGES.md', content: 'one\n' } }]], critic: [[done('one', 0.6)]] },
        'command#2': { actor: [[{ write: { path: 'CHANGES.md', content: 'two\n' } }]], critic: [[done('two', 0.9)]] },
      },
    });
    const single = await runCli(['-p', 'Bump the app', '--json-output'], { cwd: ci, env: runner.env });
    assert.equal(single.code, 0, single.stderr);
    const sessionId = JSON.parse(single.stdout).session_id as string;
    const group = await runCli(['run', '--parallel', '2', '-p', 'Write the changes', '--no-judge', '--json-output'], { cwd: ci, env: runner.env });
    assert.equal(group.code, 0, group.stderr);
    const comparison = groupComparisonSchema.parse(JSON.parse(group.stdout));
    const candidates = comparison.candidates.map((row) => row.session_id!);

    const bundle = path.join(tempDir('codeloops-bundle-'), 'bundle.tar.gz');
    const exported = await runCli(['sessions', 'export', sessionId, ...candidates, '-o', bundle, '--json'], { cwd: ci, env: runner.env });
    assert.equal(exported.code, 0, exported.stderr);
    const written = exportResultSchema.parse(JSON.parse(exported.stdout));
    assert.deepEqual(written.groups, [comparison.group_id]);
    assert.ok(written.snapshot_refs >= 3 * 3, `${written.snapshot_refs} refs`);

    // On the laptop: another data home, the original repository.
    const laptopHome = machine({});
    const before = treeOf(laptop);
    const imported = await runCli(['sessions', 'import', bundle, '-d', laptop, '--json'], { cwd: tempDir(), env: laptopHome.env });
    assert.equal(imported.code, 0, imported.stderr);
    const result = importResultSchema.parse(JSON.parse(imported.stdout));
    assert.deepEqual(result.sessions.sort(), [sessionId, ...candidates].sort());
    assert.equal(result.snapshot_refs, written.snapshot_refs);
    assert.deepEqual(treeOf(laptop), before, 'importing touches no file');

    const { start } = assertValidSessionFile(path.join(laptopHome.home.sessionsDir, `${sessionId}.jsonl`));
    assert.equal(start.working_dir, laptop, 'the session now belongs to this clone');
    const listed = JSON.parse((await runCli(['sessions', 'list', '--json'], { cwd: laptop, env: laptopHome.env })).stdout) as { id: string }[];
    assert.equal(listed.length, 3);
    const replay = await runCli(['sessions', 'replay', sessionId, '--json'], { cwd: laptop, env: laptopHome.env });
    assert.match(replay.stdout, new RegExp(`"kind":"imported".*"from_working_dir":"${ci.replace(/[/\\]/g, '.')}"`));

    // Applied here, then rolled back: the snapshots came along.
    const applied = applyOutcomeSchema.parse(JSON.parse((await runCli(['apply', sessionId, '--json'], { cwd: laptop, env: laptopHome.env })).stdout));
    assert.equal(applied.result, 'applied');
    assert.equal(treeOf(laptop)['src/app.txt'], 'v2\n');
    const rolledBack = await runCli(['rollback', sessionId, '--json'], { cwd: laptop, env: laptopHome.env });
    assert.equal(rollbackOutcomeSchema.parse(JSON.parse(rolledBack.stdout)).result, 'rolled_back', rolledBack.stderr);
    assert.deepEqual(treeOf(laptop), before);

    // The group compares here as it did there, and its best candidate applies to this clone.
    const here = groupComparisonSchema.parse(
      JSON.parse((await runCli(['candidates', comparison.group_id, '--json'], { cwd: laptop, env: laptopHome.env })).stdout),
    );
    assert.equal(here.working_dir, laptop);
    assert.deepEqual(
      here.candidates.map((row) => [row.label, row.status, row.files_changed, row.worktree]),
      comparison.candidates.map((row) => [row.label, row.status, row.files_changed, null]),
    );
    const best = await runCli(['apply', here.candidates[0]!.session_id!, '--json'], { cwd: laptop, env: laptopHome.env });
    assert.equal(applyOutcomeSchema.parse(JSON.parse(best.stdout)).result, 'applied', best.stderr);
    assert.equal(treeOf(laptop)['CHANGES.md'], 'one\n', 'without a judge, the first of two equal candidates');
  });

  it('refuses a corrupt bundle, a truncated one and one that needs commits this clone lacks, importing nothing', async () => {
    const { laptop, ci } = repositoryAndClone();
    const runner = machine({ actor: [[{ write: { path: 'x.txt', content: 'x\n' } }]], critic: [[done()]] });
    // A commit that was never pushed: the snapshots build on it.
    writeFile(ci, 'local.txt', 'not pushed\n');
    git(ci, 'add', 'local.txt');
    git(ci, 'commit', '-q', '-m', 'local only');
    const run = await runCli(['-p', 'Make x', '--json-output'], { cwd: ci, env: runner.env });
    const sessionId = JSON.parse(run.stdout).session_id as string;
    const folder = tempDir('codeloops-bundle-');
    const bundle = path.join(folder, 'bundle.tar.gz');
    assert.equal((await runCli(['sessions', 'export', sessionId, '-o', bundle], { cwd: ci, env: runner.env })).code, 0);

    const laptopHome = machine({});
    const garbage = path.join(folder, 'garbage.tar.gz');
    fs.writeFileSync(garbage, 'this is not a bundle at all\n');
    const truncated = path.join(folder, 'truncated.tar.gz');
    fs.writeFileSync(truncated, fs.readFileSync(bundle).subarray(0, Math.floor(fs.statSync(bundle).size / 2)));
    for (const [file, reason] of [
      [garbage, /not a gzipped tar file/],
      [truncated, /not a gzipped tar file|has no/],
      [bundle, /build on commits .* does not have .*fetch them \(git fetch\) and import again/],
    ] as const) {
      const result = await runCli(['sessions', 'import', file, '-d', laptop], { cwd: laptop, env: laptopHome.env });
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, reason);
      assert.match(result.stderr, /Nothing was imported/);
      assert.match(result.stderr, /Export it again/, 'with what to do');
      assert.ok(!fs.existsSync(laptopHome.home.sessionsDir) || fs.readdirSync(laptopHome.home.sessionsDir).length === 0, 'no session file');
      assert.deepEqual(refsIn(laptop), [], 'no snapshot ref');
    }

    // Once the commit is fetched, the same bundle imports.
    git(laptop, 'fetch', '-q', ci, 'main:refs/remotes/ci/main');
    const imported = await runCli(['sessions', 'import', bundle, '-d', laptop, '--json'], { cwd: laptop, env: laptopHome.env });
    assert.equal(imported.code, 0, imported.stderr);
  });

  it('refuses an id that already exists and leaves what is there as it was', async () => {
    const { laptop, ci } = repositoryAndClone();
    const runner = machine({ actor: [[{ write: { path: 'x.txt', content: 'x\n' } }]], critic: [[done()]] });
    const sessionId = JSON.parse((await runCli(['-p', 'Make x', '--json-output'], { cwd: ci, env: runner.env })).stdout).session_id as string;
    const bundle = path.join(tempDir('codeloops-bundle-'), 'bundle.tar.gz');
    assert.equal((await runCli(['sessions', 'export', sessionId, '-o', bundle], { cwd: ci, env: runner.env })).code, 0);
    const laptopHome = machine({});
    assert.equal((await runCli(['sessions', 'import', bundle, '-d', laptop], { cwd: laptop, env: laptopHome.env })).code, 0);
    const file = path.join(laptopHome.home.sessionsDir, `${sessionId}.jsonl`);
    const events = path.join(laptopHome.home.dataHome, 'codeloops', 'sidecars', sessionId, 'events.jsonl');
    const [fileBefore, eventsBefore, refsBefore] = [fs.readFileSync(file, 'utf8'), fs.readFileSync(events, 'utf8'), refsIn(laptop)];

    const again = await runCli(['sessions', 'import', bundle, '-d', laptop], { cwd: laptop, env: laptopHome.env });
    assert.equal(again.code, 2);
    assert.match(again.stderr, new RegExp(`${sessionId} is already here\\. Nothing was imported`));
    assert.match(again.stderr, /sessions delete <id>/);
    assert.equal(fs.readFileSync(file, 'utf8'), fileBefore);
    assert.equal(fs.readFileSync(events, 'utf8'), eventsBefore);
    assert.deepEqual(refsIn(laptop), refsBefore);
  });
});
