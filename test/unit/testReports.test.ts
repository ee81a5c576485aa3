import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestOutcome, TestReport } from '../../src/sessionFormat/testResults.js';
import { testCountsOf } from '../../src/sessionFormat/testResults.js';
import { readCargoTestOutput } from '../../src/testRunners/cargoTestReport.js';
import { readGoTestEvents } from '../../src/testRunners/goTestReport.js';
import { readJestReport } from '../../src/testRunners/jestReport.js';
import { readJunitReport } from '../../src/testRunners/junitReport.js';
import { readMochaReport } from '../../src/testRunners/mochaReport.js';
import { repoRoot } from '../support/testEnvironment.js';

/**
 * Each runner's own report, as the real runner wrote it for a small suite with a
 * passing, a failing, a skipped test and the runner's own oddities (pytest's xfail and
 * parameters, Jest's todo and each, go's subtests and a package that does not build,
 * cargo's ignored and should_panic tests). Recorded in /tmp/runners; the test
 * tier "runners" makes the same reports again with the real runners.
 */
function fixture(name: string): string {
  return fs.readFileSync(path.join(repoRoot(), 'test', 'fixtures', 'testReports', name), 'utf8');
}

function outcomes(report: TestReport): Record<string, TestOutcome> {
  return Object.fromEntries(report.tests.map((test) => [test.id, test.outcome]));
}

describe('test runners’ reports, test by test', () => {
  it('pytest (JUnit XML): ids as module::name[param], xfail apart from skipped, an xpass passed', () => {
    const report = readJunitReport(fixture('pytest.xml'), 'pytest');
    assert.deepEqual(outcomes(report), {
      'tests.test_a::test_ok': 'passed',
      'tests.test_a::test_bad': 'failed',
      'tests.test_a::test_skip': 'skipped',
      'tests.test_a::test_xf': 'xfail',
      'tests.test_a::test_xpass': 'passed',
      'tests.test_a::test_p[1]': 'passed',
      'tests.test_a::test_p[2]': 'passed',
      'tests.test_a::test_p[a b]': 'passed',
      'tests.test_a.TestK::test_m': 'passed',
    });
    assert.match(report.tests.find((test) => test.outcome === 'failed')!.message, /assert 1 == 2/);
    assert.deepEqual(testCountsOf(report), { collected: 9, passed: 6, failed: 1, skipped: 2 });
  });

  it('pytest: a module it cannot collect is an error outside every test', () => {
    const xml =
      '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" tests="1"><testcase classname="" name="tests.test_broken">' +
      '<error message="collection failure">E   ModuleNotFoundError: No module named \'nonexistent_module\'</error></testcase></testsuite></testsuites>';
    const report = readJunitReport(xml, 'pytest');
    assert.deepEqual(report.tests, []);
    assert.equal(report.errors.length, 1);
    assert.match(report.errors[0]!, /tests\.test_broken: .*nonexistent_module/);
  });

  it('node --test (JUnit): suites and names joined, todo and skip as skipped', () => {
    const report = readJunitReport(fixture('node.xml'), 'node');
    assert.deepEqual(outcomes(report), { 'suite › ok': 'passed', 'suite › bad': 'failed', 'suite › sk': 'skipped', 'suite › td': 'skipped', plain: 'passed' });
    assert.match(report.tests.find((test) => test.id === 'suite › bad')!.message, /1 == 2/);
  });

  it('mocha (JSON): the file from where mocha ran, then the full title', () => {
    const report = readMochaReport(fixture('mocha.json'), '/tmp/runners/js');
    assert.deepEqual(outcomes(report), {
      'test/a.test.js › top level': 'passed',
      'test/a.test.js › sum adds': 'passed',
      'test/a.test.js › sum fails': 'failed',
      'test/a.test.js › sum skipped': 'skipped',
      'test/a.test.js › sum nested deep <x>': 'passed',
    });
    assert.match(report.tests[2]!.message, /2 == 3/);
  });

  it('mocha: a failing before-all hook is an error, its tests missing', () => {
    const json = JSON.stringify({
      tests: [],
      failures: [{ title: '"before all" hook', fullTitle: 'db "before all" hook', file: '/w/test/db.js', err: { message: 'no database' } }],
      pending: [],
    });
    const report = readMochaReport(json, '/w');
    assert.deepEqual(report.tests, []);
    assert.deepEqual(report.errors, ['db "before all" hook: no database']);
  });

  for (const runner of ['jest', 'vitest'] as const) {
    it(`${runner} (JSON): file › describe › title, pending and todo skipped, each row its own test`, () => {
      const report = readJestReport(fixture(`${runner}.json`), runner, '/tmp/runners/js');
      const folder = runner === 'jest' ? 'jt/c.test.js' : 'vt/d.test.mjs';
      assert.deepEqual(outcomes(report), {
        [`${folder} › calc › adds`]: 'passed',
        [`${folder} › calc › fails`]: 'failed',
        [`${folder} › calc › skip`]: 'skipped',
        [`${folder} › calc › todo`]: 'skipped',
        [`${folder} › calc › xf`]: 'passed',
        [`${folder} › calc › row 1`]: 'passed',
        [`${folder} › calc › row 2`]: 'passed',
      });
      assert.match(report.tests[1]!.message, /toBe|to be 3/);
    });
  }

  it('Jest: a test file that does not load is an error', () => {
    const json = JSON.stringify({ testResults: [{ name: '/w/a.test.js', status: 'failed', message: 'Cannot find module', assertionResults: [] }] });
    const report = readJestReport(json, 'jest', '/w');
    assert.deepEqual(report.errors, ['a.test.js: Cannot find module']);
  });

  it('go test -json: package and name, subtests, a package that does not build is an error', () => {
    const report = readGoTestEvents(fixture('go.json'));
    assert.deepEqual(outcomes(report), {
      'example.com/m TestOk': 'passed',
      'example.com/m TestBad': 'failed',
      'example.com/m TestSkip': 'skipped',
      'example.com/m TestSub/a_b': 'passed',
      'example.com/m TestSub/c': 'failed',
      'example.com/m TestSub': 'failed',
    });
    assert.match(report.tests.find((test) => test.id.endsWith('TestBad'))!.message, /boom/);
    assert.ok(
      report.errors.some((error) => /broken/.test(error)),
      report.errors.join('\n'),
    );
  });

  it('cargo test: the path in its crate, ignored skipped, should_panic passed, every binary', () => {
    const report = readCargoTestOutput(fixture('cargo.txt'));
    assert.deepEqual(outcomes(report), {
      'tests::later': 'skipped',
      'tests::ok': 'passed',
      'tests::panics': 'passed',
      'tests::bad': 'failed',
      integ: 'passed',
    });
    assert.match(report.tests.find((test) => test.outcome === 'failed')!.message, /left: 2/);
  });

  it('two tests of the same id are numbered in the runner’s order', () => {
    const xml = '<testsuites><testcase name="same"/><testcase name="same"><failure message="x"/></testcase></testsuites>';
    assert.deepEqual(outcomes(readJunitReport(xml, 'node')), { same: 'passed', 'same #2': 'failed' });
  });
});
