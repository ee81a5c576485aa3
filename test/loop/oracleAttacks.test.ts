import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { openRepository } from '../../src/git/repository.js';
import { TestOracle } from '../../src/loop/testOracle.js';
import { BROKEN_SUM, change, found, judge, MOCHA_TEST, mochaProject, npmTest, withMochaOnPath } from '../support/oracleJudging.js';
import { createRepo, git, removeTempDirs, tempDir } from '../support/testEnvironment.js';

/**
 * A cheating actor against the oracle: ways to make the start's tests pass on broken
 * code that go around what `verify/startTests.ts` puts back.
 */

/** The oracle's worktree, as the actor finds it: `git worktree list` in the user's repository. */
function oracleWorktreeOf(repo: string): string {
  const listed = git(repo, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((line) => line.startsWith('worktree ') && line.includes(`${path.sep}oracle${path.sep}`));
  assert.equal(listed.length, 1, 'the oracle’s worktree is listed');
  return listed[0]!.slice('worktree '.length);
}

describe('the oracle against a cheating actor', function () {
  this.timeout(300_000);
  withMochaOnPath(removeTempDirs);

  it('refuses code under test that registers a passing test under a baseline test’s name', async () => {
    // Loaded by the test file before its own `describe`: mocha gives this test the same file and title, and runs it first.
    const impostor = `${BROKEN_SUM}if (typeof describe === 'function') describe('sum', () => it('carries', () => {}));\n`;
    const judgement = await judge(mochaProject(), npmTest, (repo) => change(repo, { 'src/sum.js': impostor }));
    assert.deepEqual(found(judgement), ['test_regressed test/sum.test.js › sum carries (failed)']);
  });

  it('refuses a test file edited in the oracle’s own worktree after the baseline', async () => {
    const judgement = await judge(mochaProject(), npmTest, (repo) => {
      const worktree = oracleWorktreeOf(repo);
      fs.writeFileSync(path.join(worktree, 'test/sum.test.js'), MOCHA_TEST.replace('sum(9, 1), 10', 'sum(9, 1), 11'));
      return change(repo, { 'src/sum.js': BROKEN_SUM });
    });
    assert.deepEqual(found(judgement), ['test_regressed test/sum.test.js › sum carries (failed)']);
  });

  it('refuses a runner configuration planted in the oracle’s own worktree after the baseline', async () => {
    const judgement = await judge(mochaProject(), npmTest, (repo) => {
      const worktree = oracleWorktreeOf(repo);
      fs.writeFileSync(path.join(worktree, '.mocharc.yml'), 'require: ./patch.js\n');
      fs.writeFileSync(path.join(worktree, 'patch.js'), "require('./src/sum').sum = (a, b) => a + b;\n");
      return change(repo, { 'src/sum.js': BROKEN_SUM });
    });
    assert.deepEqual(found(judgement), ['test_regressed test/sum.test.js › sum carries (failed)']);
  });

  it('refuses a post-checkout hook in the user’s repository that edits the test when the oracle’s worktree is made', async () => {
    const judgement = await judge(mochaProject(), npmTest, (repo) => {
      const hook = path.join(repo, '.git', 'hooks', 'post-checkout');
      fs.writeFileSync(hook, "#!/bin/sh\nsed -i 's/sum(9, 1), 10/sum(9, 1), 11/' test/sum.test.js\n", { mode: 0o755 });
      // Anything that makes the worktree again runs it: here, a stray file in it.
      fs.writeFileSync(path.join(oracleWorktreeOf(repo), 'stray'), '');
      return change(repo, { 'src/sum.js': BROKEN_SUM });
    });
    assert.deepEqual(found(judgement), ['test_regressed test/sum.test.js › sum carries (failed)']);
  });

  it('refuses every baseline test when the worktree, changed since, cannot be readied again at DONE', async () => {
    // The setup passes the first time only (a registry gone offline, or an actor's doing): the oracle must not judge nothing.
    const marker = path.join(tempDir('codeloops-setup-'), 'ran');
    const judgement = await judge(
      mochaProject(),
      npmTest,
      (repo) => {
        fs.writeFileSync(path.join(oracleWorktreeOf(repo), 'stray'), '');
        return change(repo, { 'src/sum.js': BROKEN_SUM });
      },
      `test ! -e '${marker}' && touch '${marker}'`,
    );
    assert.deepEqual(found(judgement), [
      'test_missing test/sum.test.js › sum adds (not_collected)',
      'test_missing test/sum.test.js › sum carries (not_collected)',
    ]);
    assert.match(judgement.findings[0]!.message, /setup/);
  });

  it('refuses every baseline test when a .mocharc.yml that patches the code appears above the oracle’s worktree', async () => {
    const judgement = await judge(mochaProject(), npmTest, (repo) => {
      const worktree = oracleWorktreeOf(repo);
      const above = path.dirname(path.dirname(worktree));
      fs.writeFileSync(path.join(above, '.mocharc.yml'), `require: ${path.join(above, 'patch.js')}\n`);
      fs.writeFileSync(path.join(above, 'patch.js'), `require('${path.join(worktree, 'src/sum.js')}').sum = (a, b) => a + b;\n`);
      return change(repo, { 'src/sum.js': BROKEN_SUM });
    });
    assert.deepEqual(found(judgement), [
      'test_missing test/sum.test.js › sum adds (not_collected)',
      'test_missing test/sum.test.js › sum carries (not_collected)',
    ]);
    assert.match(judgement.findings[0]!.message, /above/);
  });

  it('removes the worktree an oracle whose runner was killed left behind, when the next one starts in the repository', async () => {
    const repo = mochaProject();
    const repository = await openRepository(repo);
    const start = git(repo, 'rev-parse', 'HEAD').trim();
    const directory = tempDir('codeloops-worktrees-');
    const oracleOf = (sessionId: string) =>
      new TestOracle({
        repository,
        workingDir: repo,
        sessionId,
        startCommit: start,
        checks: [npmTest],
        isolation: { directory, worktree: { copy: [], setup: null, setupTimeoutSecs: 60 } },
        userProtected: [],
      });
    const oracleWorktrees = () =>
      git(repo, 'worktree', 'list', '--porcelain')
        .split('\n')
        .filter((line) => line.includes(`${path.sep}oracle${path.sep}`));
    const controller = new AbortController();
    // The first runner is killed (kill -9) after its baseline: its dispose never runs, and its pid is gone.
    await oracleOf('killed').baseline(controller.signal);
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    fs.writeFileSync(path.join(directory, 'oracle', 'killed', 'owner'), `${gone}\n`);
    assert.equal(oracleWorktrees().length, 1);
    const next = oracleOf('next');
    try {
      await next.baseline(controller.signal);
      assert.deepEqual(
        oracleWorktrees().map((line) => path.basename(path.dirname(line))),
        ['next'],
      );
      assert.equal(fs.existsSync(path.join(directory, 'oracle', 'killed')), false);
    } finally {
      await next.dispose();
    }
    assert.deepEqual(oracleWorktrees(), []);
    assert.equal(fs.existsSync(path.join(directory, 'oracle')), false, 'nothing left under the worktrees folder');
  });

  it('says a check that hangs on the start tree timed out, and takes no longer than its timeout', async () => {
    const repo = createRepo({
      files: {
        'package.json': `${JSON.stringify({ name: 'p', scripts: { test: 'mocha test/' } }, null, 2)}\n`,
        'test/hangs.test.js': "it('hangs', function () { this.timeout(0); return new Promise(() => {}); });\n",
      },
    });
    const oracle = new TestOracle({
      repository: await openRepository(repo),
      workingDir: repo,
      sessionId: 'hangs',
      startCommit: git(repo, 'rev-parse', 'HEAD').trim(),
      checks: [{ ...npmTest, timeoutSecs: 2 }],
      isolation: { directory: tempDir('codeloops-worktrees-'), worktree: { copy: [], setup: null, setupTimeoutSecs: 60 } },
      userProtected: [],
    });
    const started = Date.now();
    try {
      const baseline = await oracle.baseline(new AbortController().signal);
      assert.equal(baseline.unavailable, 'tests did not finish on the start tree within its 2 s (its timeout)');
      assert.ok(Date.now() - started < 30_000);
    } finally {
      await oracle.dispose();
    }
  });
});
