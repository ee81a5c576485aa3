import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runCheck, type CheckResult, type CheckSpec } from '../../src/checks/runCheck.js';
import type { TestOutcome, TestRunner } from '../../src/sessionFormat/testResults.js';
import { removeTempDirs, repoRoot, tempDir } from '../support/testEnvironment.js';

/**
 * Checks run with the real test runners, each on a small project of its language with
 * a test that passes, one that fails and one skipped: the check's command as a user
 * writes it (`npm test`, `python3 -m pytest`, `go test ./...`, `make test` with
 * `runner = "pytest"`), the runner's own report read test by test.
 */
const PYTHON = '/usr/bin/python3';

function project(files: Record<string, string>): string {
  const dir = tempDir('codeloops-runner-');
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

/** The repository's own mocha, on the PATH as a project's node_modules/.bin would put it. */
const env = { ...process.env, PATH: `${path.join(repoRoot(), 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}` };

function check(run: string, runner?: TestRunner | 'none'): CheckSpec {
  return { name: 'tests', run, timeoutSecs: 120, required: true, ...(runner && { runner }) };
}

function outcomes(result: CheckResult): Record<string, TestOutcome> {
  return Object.fromEntries((result.report?.tests ?? []).map((test) => [test.id, test.outcome]));
}

const MOCHA_TESTS = `const assert = require('node:assert');
describe('sum', () => {
  it('adds', () => assert.equal(1 + 1, 2));
  it('carries', () => assert.equal(9 + 1, FAILING));
  it.skip('later', () => {});
});
`;

const PYTEST_TESTS = `import pytest
def test_adds(): assert 1 + 1 == 2
def test_carries(): assert 9 + 1 == FAILING
@pytest.mark.skip(reason="later")
def test_later(): pass
@pytest.mark.xfail
def test_known(): assert False
`;

function hasProgram(program: string, args: string[]): boolean {
  try {
    execFileSync(program, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('checks read test by test from the real runners', function () {
  this.timeout(300_000);
  after(removeTempDirs);

  it('mocha through `npm test`: each test, its outcome and the failure, with the terminal output kept', async () => {
    const dir = project({ 'package.json': JSON.stringify({ scripts: { test: 'mocha test/' } }), 'test/sum.test.js': MOCHA_TESTS.replace('FAILING', '11') });
    const result = await runCheck(check('npm test'), { cwd: dir, env });
    assert.equal(result.passed, false);
    assert.deepEqual(outcomes(result), {
      'test/sum.test.js › sum adds': 'passed',
      'test/sum.test.js › sum carries': 'failed',
      'test/sum.test.js › sum later': 'skipped',
    });
    assert.deepEqual(result.tests, { collected: 3, passed: 1, failed: 1, skipped: 1 });
    assert.match(result.report!.tests[1]!.message, /10 == 11/);
  });

  it('a known runner that ran no test fails the check, whatever its exit code', async () => {
    const dir = project({ 'package.json': JSON.stringify({ scripts: { test: 'mocha --allow-uncaught test/' } }), 'test/empty.test.js': '// nothing yet\n' });
    const result = await runCheck(check('npm test'), { cwd: dir, env });
    assert.equal(result.passed, false);
    assert.deepEqual(result.tests, { collected: 0, passed: 0, failed: 0, skipped: 0 });
    assert.match(result.output, /mocha ran no test: the check fails/);
  });

  it('node --test through its own variables, wherever it runs in the command', async () => {
    const dir = project({
      'sum.test.js':
        "const test = require('node:test'); const assert = require('node:assert');\ntest('adds', () => assert.equal(2, 2));\ntest('carries', () => assert.equal(10, 11));\ntest.skip('later', () => {});\n",
    });
    const result = await runCheck(check('node --test sum.test.js'), { cwd: dir, env });
    assert.equal(result.passed, false);
    assert.deepEqual(outcomes(result), { adds: 'passed', carries: 'failed', later: 'skipped' });
    assert.match(result.output, /✖ carries/, 'the runner’s own output is still shown');
  });

  it('pytest, as `python3 -m pytest` and through `make test` named in the config; xfail apart', async function () {
    if (!hasProgram(PYTHON, ['-m', 'pytest', '--version'])) this.skip();
    const dir = project({ 'tests/test_sum.py': PYTEST_TESTS.replace('FAILING', '11'), Makefile: `test:\n\t${PYTHON} -m pytest -q tests\n` });
    const expected = {
      'tests.test_sum::test_adds': 'passed',
      'tests.test_sum::test_carries': 'failed',
      'tests.test_sum::test_later': 'skipped',
      'tests.test_sum::test_known': 'xfail',
    };
    const direct = await runCheck(check(`${PYTHON} -m pytest -q tests`), { cwd: dir, env });
    assert.deepEqual(outcomes(direct), expected);
    const throughMake = await runCheck(check('make test', 'pytest'), { cwd: dir, env });
    assert.deepEqual(outcomes(throughMake), expected);
    assert.equal(throughMake.passed, false);
    const unnamed = await runCheck(check('make test'), { cwd: dir, env });
    assert.equal(unnamed.report, null, 'make test with no runner named counts by its exit code');
  });

  it('go test: its events read, its output shown as text', async function () {
    if (!hasProgram('go', ['version'])) this.skip();
    const dir = project({
      'go.mod': 'module example.com/sum\n\ngo 1.19\n',
      'sum_test.go':
        'package sum\nimport "testing"\nfunc TestAdds(t *testing.T) {}\nfunc TestCarries(t *testing.T) { t.Fatal("10 != 11") }\nfunc TestLater(t *testing.T) { t.Skip("later") }\n',
    });
    const result = await runCheck(check('go test ./...'), { cwd: dir, env: { ...env, GOCACHE: path.join(dir, '.gocache'), GOFLAGS: '-count=1' } });
    assert.deepEqual(outcomes(result), {
      'example.com/sum TestAdds': 'passed',
      'example.com/sum TestCarries': 'failed',
      'example.com/sum TestLater': 'skipped',
    });
    assert.match(result.output, /--- FAIL: TestCarries/);
    assert.doesNotMatch(result.output, /"Action"/, 'the events are shown as the text they carry');
  });

  it('cargo test: its lines read', async function () {
    if (!hasProgram('cargo', ['--version'])) this.skip();
    const dir = project({
      'Cargo.toml': '[package]\nname = "sum"\nversion = "0.1.0"\nedition = "2021"\n',
      'src/lib.rs':
        '#[cfg(test)]\nmod tests {\n  #[test] fn adds() { assert_eq!(1 + 1, 2); }\n  #[test] fn carries() { assert_eq!(9 + 1, 11); }\n  #[test] #[ignore] fn later() {}\n}\n',
    });
    const result = await runCheck(check('cargo test --offline'), { cwd: dir, env: { ...env, CARGO_TARGET_DIR: path.join(dir, 'target') } });
    assert.deepEqual(outcomes(result), { 'tests::adds': 'passed', 'tests::carries': 'failed', 'tests::later': 'skipped' });
  });

  it('a runner made to exit 0 still fails the check when its report says a test failed', async () => {
    const dir = project({
      'package.json': JSON.stringify({ scripts: { test: 'mocha test/ --exit; exit 0' } }),
      'test/sum.test.js': MOCHA_TESTS.replace('FAILING', '11'),
    });
    const direct = await runCheck(check('npx mocha test/ ; true'), { cwd: dir, env });
    assert.equal(direct.report, null, 'the last step is `true`: counted by its exit code');
    const hidden = await runCheck(check('npx mocha --reporter dot test/'), { cwd: dir, env });
    assert.equal(hidden.passed, false);
  });
});
