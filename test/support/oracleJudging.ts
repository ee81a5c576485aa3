import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { CheckSpec } from '../../src/checks/runCheck.js';
import { openRepository } from '../../src/git/repository.js';
import { TestOracle, type OracleJudgement } from '../../src/loop/testOracle.js';
import { createRepo, git, repoRoot, tempDir, writeFile } from './testEnvironment.js';

/**
 * The oracle on a small real mocha project, as the oracle's tests and attacks judge it:
 * the actor's work is a commit on top of the start, as a snapshot would be.
 */
export const SUM = 'exports.sum = (a, b) => a + b;\n';
/** `sum(9, 1)` is 11: "carries" fails, "adds" passes. */
export const BROKEN_SUM = 'exports.sum = (a, b) => a + b + (a === 9 ? 1 : 0);\n';
export const MOCHA_TEST = `const assert = require('node:assert');
const { sum } = require('../src/sum');
describe('sum', () => {
  it('adds', () => assert.equal(sum(1, 1), 2));
  it('carries', () => assert.equal(sum(9, 1), 10));
});
`;

export const npmTest: CheckSpec = { name: 'tests', run: 'npm test', timeoutSecs: 120, required: true };

export function mochaProject(): string {
  return createRepo({
    files: {
      'package.json': `${JSON.stringify({ name: 'p', scripts: { test: 'mocha test/' } }, null, 2)}\n`,
      'src/sum.js': SUM,
      'test/sum.test.js': MOCHA_TEST,
    },
  });
}

/** The actor's change: files written or removed (null), committed on top of HEAD; gives the commit. */
export function change(repo: string, files: Record<string, string | null>): string {
  for (const [file, text] of Object.entries(files)) {
    if (text === null) fs.rmSync(path.join(repo, file), { force: true, recursive: true });
    else writeFile(repo, file, text);
  }
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'the actor');
  return git(repo, 'rev-parse', 'HEAD').trim();
}

/** A baseline on HEAD, then the oracle's judgement of the commit `act` makes (`setup`: `[worktree] setup`). */
export async function judge(repo: string, check: CheckSpec, act: (repo: string) => string, setup: string | null = null): Promise<OracleJudgement> {
  const repository = await openRepository(repo);
  const start = git(repo, 'rev-parse', 'HEAD').trim();
  const oracle = new TestOracle({
    repository,
    workingDir: repo,
    sessionId: `oracle-${path.basename(repo)}`,
    startCommit: start,
    checks: [check],
    isolation: { directory: tempDir('codeloops-worktrees-'), worktree: { copy: [], setup, setupTimeoutSecs: 60 } },
    userProtected: [],
  });
  const controller = new AbortController();
  try {
    const baseline = await oracle.baseline(controller.signal);
    assert.equal(baseline.unavailable, null, String(baseline.unavailable));
    const judgement = await oracle.judge(act(repo), controller.signal);
    assert.ok(judgement);
    return judgement;
  } finally {
    await oracle.dispose();
  }
}

/** Each finding as `kind id (outcome)`. */
export const found = (judgement: OracleJudgement) => judgement.findings.map((finding) => `${finding.kind} ${finding.id} (${finding.outcome})`);

/**
 * Mocha on PATH for the suite, as `npm test` finds it in a project that installed it:
 * this repository's own. Call in a `describe`; `cleanUp` runs after, with PATH given back.
 */
export function withMochaOnPath(cleanUp: () => void): void {
  const savedPath = process.env.PATH;
  before(() => (process.env.PATH = `${path.join(repoRoot(), 'node_modules', '.bin')}${path.delimiter}${savedPath}`));
  after(() => {
    process.env.PATH = savedPath;
    cleanUp();
  });
}
