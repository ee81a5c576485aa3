import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { applyOutcomeSchema } from '../../src/sessionFormat/applyOutcome.js';
import { groupComparisonSchema } from '../../src/sessionFormat/candidateGroups.js';
import { rollbackOutcomeSchema } from '../../src/sessionFormat/rollbackOutcome.js';
import { exportResultSchema, importResultSchema } from '../../src/sessionFormat/sessionBundle.js';
import { runCli, startCli } from '../support/cliProcess.js';
import { done } from '../support/scriptedAgent.js';
import {
  allRefs,
  assertNothingImported,
  exportedRun,
  failureOf,
  machine,
  oneStepRunner,
  refsIn,
  repack,
  repositoryAndClone,
} from '../support/sessionBundles.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo, git, removeTempDirs, tempDir, treeOf, writeFile } from '../support/testEnvironment.js';

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

  it("snapshots a branch of the user's already holds (work kept from a snapshot, then pushed) travel too, listed rather than bundled", async () => {
    const { laptop, ci } = repositoryAndClone();
    const runner = oneStepRunner();
    const sessionId = JSON.parse((await runCli(['-p', 'Make x', '--json-output'], { cwd: ci, env: runner.env })).stdout).session_id as string;
    const snapshots = git(ci, 'for-each-ref', '--format=%(objectname) %(refname)', `refs/codeloops/${sessionId}/`);
    // Every snapshot kept on a branch of its own: git's bundle would leave them all out.
    snapshots
      .split('\n')
      .filter(Boolean)
      .forEach((line, index) => git(ci, 'branch', `kept-${index}`, line.split(' ')[0]!));
    const bundle = path.join(tempDir('codeloops-bundle-'), 'bundle.tar.gz');
    const exported = await runCli(['sessions', 'export', sessionId, '-o', bundle, '--json'], { cwd: ci, env: runner.env });
    assert.equal(exported.code, 0, exported.stderr);
    git(laptop, 'fetch', '-q', ci, 'refs/heads/kept-*:refs/heads/kept-*');
    const laptopHome = machine({});
    const imported = await runCli(['sessions', 'import', bundle, '-d', laptop, '--json'], { cwd: laptop, env: laptopHome.env });
    assert.equal(imported.code, 0, imported.stderr);
    assert.equal(git(laptop, 'for-each-ref', '--format=%(objectname) %(refname)', `refs/codeloops/${sessionId}/`), snapshots);
    // A clone without that history is told which commits to fetch.
    const other = machine({});
    const refused = await runCli(['sessions', 'import', bundle, '-d', createRepo({ files: { 'README.md': '# project\n', 'src/app.txt': 'v1\n' } })], {
      cwd: laptop,
      env: other.env,
    });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /does not have .*git fetch/);
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
    assert.match(again.stderr, new RegExp(`${sessionId} is already here \\(its session file .*\\)\\. Nothing was imported`));
    assert.match(again.stderr, /sessions delete <id>/);
    assert.equal(fs.readFileSync(file, 'utf8'), fileBefore);
    assert.equal(fs.readFileSync(events, 'utf8'), eventsBefore);
    assert.deepEqual(refsIn(laptop), refsBefore);
  });

  it('a lock file a crashed git left where a ref goes is git_locked, naming the file to remove, not session_exists; once it is gone the import succeeds', async () => {
    const { laptop, ci } = repositoryAndClone();
    const { sessionId, bundle } = await exportedRun(ci, oneStepRunner());
    const laptopHome = machine({});
    const stale = path.join(laptop, '.git', 'refs', 'codeloops', sessionId, 'head.lock');
    fs.mkdirSync(path.dirname(stale), { recursive: true });
    fs.writeFileSync(stale, '');
    const refused = failureOf(await runCli(['sessions', 'import', bundle, '-d', laptop, '--json'], { cwd: laptop, env: laptopHome.env }));
    assert.equal(refused.code, 'git_locked', refused.message);
    assert.equal(refused.details.lock_file, stale);
    assert.ok(refused.message.includes(`${stale} exists`), refused.message);
    assert.ok(refused.hint?.includes(`rm "${stale}"`), String(refused.hint));
    assertNothingImported(laptopHome.home);
    assert.deepEqual(refsIn(laptop), []);
    fs.rmSync(stale);
    const imported = await runCli(['sessions', 'import', bundle, '-d', laptop], { cwd: laptop, env: laptopHome.env });
    assert.equal(imported.code, 0, imported.stderr);
  });

  it("one repository used from two data folders: an import that finds the session's refs moves none of them, and rollback still works in the first", async () => {
    const repo = repositoryAndClone().laptop;
    const first = oneStepRunner();
    const { sessionId, bundle } = await exportedRun(repo, first);
    // Rolled back after the export: the session's head ref moves on from what the bundle holds.
    const rolledBack = await runCli(['rollback', sessionId, '--json'], { cwd: repo, env: first.env });
    assert.equal(rollbackOutcomeSchema.parse(JSON.parse(rolledBack.stdout)).result, 'rolled_back', rolledBack.stderr);
    const refsBefore = allRefs(repo);

    const second = machine({});
    const refused = failureOf(await runCli(['sessions', 'import', bundle, '-d', repo, '--json'], { cwd: repo, env: second.env }));
    assert.equal(refused.code, 'session_exists');
    assert.match(refused.message, new RegExp(`${sessionId} is already here \\(\\d+ snapshot refs under refs/codeloops/${sessionId}/ in ${repo}\\)`));
    assert.equal(allRefs(repo), refsBefore, 'every ref as it was');
    assertNothingImported(second.home);

    // The first data folder's session still has everything it needs.
    const undone = await runCli(['rollback', '--undo', sessionId, '--json'], { cwd: repo, env: first.env });
    assert.equal(rollbackOutcomeSchema.parse(JSON.parse(undone.stdout)).result, 'undone', undone.stderr);
    assert.equal(treeOf(repo)['x.txt'], 'x\n');
    const again = await runCli(['rollback', sessionId, '--json'], { cwd: repo, env: first.env });
    assert.equal(rollbackOutcomeSchema.parse(JSON.parse(again.stdout)).result, 'rolled_back', again.stderr);
  });

  it("refuses a session whose id is a candidate group's here, keeping the group's record and refs", async () => {
    const { laptop, ci } = repositoryAndClone();
    const local = machine({
      candidates: {
        'command#1': { actor: [[{ write: { path: 'CHANGES.md', content: 'one\n' } }]], critic: [[done('one', 0.6)]] },
        'command#2': { actor: [[{ write: { path: 'CHANGES.md', content: 'two\n' } }]], critic: [[done('two', 0.9)]] },
      },
    });
    const group = await runCli(['run', '--parallel', '2', '-p', 'Write the changes', '--no-judge', '--json-output'], { cwd: laptop, env: local.env });
    assert.equal(group.code, 0, group.stderr);
    const groupId = groupComparisonSchema.parse(JSON.parse(group.stdout)).group_id;
    const record = path.join(local.home.dataHome, 'codeloops', 'sidecars', '_groups', groupId, 'group.jsonl');
    const [recordBefore, refsBefore] = [fs.readFileSync(record, 'utf8'), allRefs(laptop)];
    assert.match(refsBefore, new RegExp(`refs/codeloops/${groupId}/base`));

    // A session renamed to the group's id (its snapshots left out: the name alone must be refused).
    const { sessionId, bundle } = await exportedRun(ci, oneStepRunner());
    const crafted = await repack(bundle, 'named-like-the-group.tar.gz', (root) => {
      const manifest = JSON.parse(fs.readFileSync(path.join(root, 'manifest.json'), 'utf8'));
      manifest.sessions[0].id = groupId;
      fs.writeFileSync(path.join(root, 'manifest.json'), JSON.stringify(manifest));
      fs.renameSync(path.join(root, 'sessions', `${sessionId}.jsonl`), path.join(root, 'sessions', `${groupId}.jsonl`));
      fs.renameSync(path.join(root, 'sidecars', sessionId), path.join(root, 'sidecars', groupId));
      fs.rmSync(path.join(root, 'snapshots.bundle'));
    });
    const refused = failureOf(await runCli(['sessions', 'import', crafted, '-d', laptop, '--json'], { cwd: laptop, env: local.env }));
    assert.equal(refused.code, 'session_exists');
    assert.match(
      refused.message,
      new RegExp(`${groupId} is already here \\(a candidate group's record .*, 1 snapshot ref under refs/codeloops/${groupId}/ in ${laptop}\\)`),
    );
    // From a data folder without the group's record, its refs in the repository are enough.
    const elsewhere = machine({});
    const refusedElsewhere = failureOf(await runCli(['sessions', 'import', crafted, '-d', laptop, '--json'], { cwd: laptop, env: elsewhere.env }));
    assert.equal(refusedElsewhere.code, 'session_exists');
    assertNothingImported(elsewhere.home);
    assert.equal(fs.readFileSync(record, 'utf8'), recordBefore);
    assert.equal(allRefs(laptop), refsBefore);
  });

  it('two imports of the same bundle at once: one imports it, the other is refused (session_exists) and removes nothing of the first', async () => {
    const { laptop, ci } = repositoryAndClone();
    const { sessionId, bundle } = await exportedRun(ci, oneStepRunner());
    const home = machine({});
    // A git hook holds the first import that has created the snapshot refs, until the other import has ended.
    const gate = tempDir('codeloops-gate-');
    const release = path.join(gate, 'release');
    execFileSync('mkfifo', [release]);
    const hook = path.join(laptop, '.git', 'hooks', 'reference-transaction');
    fs.writeFileSync(
      hook,
      `#!/bin/sh\n[ "$1" = committed ] || exit 0\ngrep -q ' refs/codeloops/' || exit 0\nmkdir '${gate}/held' 2>/dev/null || exit 0\nread line < '${release}'\n`,
      { mode: 0o755 },
    );
    const imports = [0, 1].map(() => startCli(['sessions', 'import', bundle, '-d', laptop, '--json'], { cwd: laptop, env: home.env }).done);
    try {
      const loser = await Promise.race(imports);
      const refused = failureOf(loser);
      assert.equal(refused.code, 'session_exists', refused.message);
      assert.match(refused.message, new RegExp(`${sessionId} is already here`));
    } finally {
      // Opening the pipe waits for the held hook to read it; if both imports ended without one being held, nothing reads it.
      const opening = fs.promises.open(release, 'w');
      if (await Promise.race([opening.then(() => false), Promise.all(imports).then(() => true)])) {
        fs.closeSync(fs.openSync(release, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK));
      }
      const writer = await opening;
      await writer.write('go\n').catch(() => undefined);
      await writer.close();
    }
    const [a, b] = await Promise.all(imports);
    const winner = a!.code === 0 ? a! : b!;
    assert.equal(winner.code, 0, winner.stderr);
    assert.deepEqual(importResultSchema.parse(JSON.parse(winner.stdout)).sessions, [sessionId]);
    fs.rmSync(hook);
    assertValidSessionFile(path.join(home.home.sessionsDir, `${sessionId}.jsonl`));
    assert.ok(fs.existsSync(path.join(home.home.dataHome, 'codeloops', 'sidecars', sessionId, 'events.jsonl')));
    assert.ok(refsIn(laptop).includes(`refs/codeloops/${sessionId}/head`), 'the snapshots stay');
    const applied = await runCli(['apply', sessionId, '--json'], { cwd: laptop, env: home.env });
    assert.equal(applyOutcomeSchema.parse(JSON.parse(applied.stdout)).result, 'applied', applied.stderr);
    assert.equal(treeOf(laptop)['x.txt'], 'x\n');
  });
});
