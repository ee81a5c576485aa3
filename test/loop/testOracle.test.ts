import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { CheckSpec } from '../../src/checks/runCheck.js';
import { BROKEN_SUM, change, found, judge, MOCHA_TEST, mochaProject, npmTest, withMochaOnPath } from '../support/oracleJudging.js';
import { createRepo, git, removeTempDirs } from '../support/testEnvironment.js';

/**
 * The oracle on small real projects (mocha through `npm test`, pytest): the actor's
 * tampering is a commit on top of the start, as a snapshot would be; the oracle judges
 * it by running the start's tests on it in a clean worktree.
 */
const PYTHON = '/usr/bin/python3';

describe('the oracle: the start’s tests on the final code', function () {
  this.timeout(300_000);
  withMochaOnPath(removeTempDirs);

  it('refuses a broken library whose test was changed to expect the broken output', async () => {
    const judgement = await judge(mochaProject(), npmTest, (repo) =>
      change(repo, { 'src/sum.js': BROKEN_SUM, 'test/sum.test.js': MOCHA_TEST.replace('sum(9, 1), 10', 'sum(9, 1), 11') }),
    );
    assert.deepEqual(found(judgement), ['test_regressed test/sum.test.js › sum carries (failed)']);
    assert.match(judgement.findings[0]!.message, /11 == 10|10 == 11|Expected values/);
    assert.deepEqual(judgement.restored, ['test/sum.test.js']);
  });

  it('refuses a test deleted, a skip added, and `exit 0` for the test script', async () => {
    const tampers: Record<string, string | null>[] = [
      { 'test/sum.test.js': null },
      { 'test/sum.test.js': MOCHA_TEST.replace("it('carries'", "it.skip('carries'") },
      { 'package.json': `${JSON.stringify({ name: 'p', scripts: { test: 'exit 0' } }, null, 2)}\n` },
    ];
    for (const tamper of tampers) {
      const judgement = await judge(mochaProject(), npmTest, (repo) => change(repo, { 'src/sum.js': BROKEN_SUM, ...tamper }));
      assert.deepEqual(found(judgement), ['test_regressed test/sum.test.js › sum carries (failed)'], JSON.stringify(tamper));
    }
  });

  it('refuses a new test helper that patches the code under test, and a stand-in for mocha in node_modules', async () => {
    const judgement = await judge(mochaProject(), npmTest, (repo) =>
      change(repo, {
        'src/sum.js': BROKEN_SUM,
        '.mocharc.yml': 'require: test/setup.js\n',
        'test/setup.js': "require('../src/sum').sum = (a, b) => a + b;\n",
      }),
    );
    assert.deepEqual(found(judgement), ['test_regressed test/sum.test.js › sum carries (failed)']);
  });

  it('accepts a test file renamed with its content, and a refactor that keeps the tests passing', async () => {
    const judgement = await judge(mochaProject(), npmTest, (repo) => {
      git(repo, 'mv', 'test/sum.test.js', 'test/adding.test.js');
      return change(repo, { 'src/sum.js': 'exports.sum = (a, b) => [a, b].reduce((x, y) => x + y, 0);\n' });
    });
    assert.deepEqual(found(judgement), []);
    assert.equal(judgement.passed, 2);
    assert.equal(judgement.baseline, 2);
  });

  it('leaves a test that fails on the start tree when run again out, as flaky', async () => {
    const repo = createRepo({
      files: {
        'package.json': `${JSON.stringify({ name: 'p', scripts: { test: 'mocha test/' } }, null, 2)}\n`,
        'test/once.test.js':
          "const fs = require('node:fs'); const path = require('node:path');\n" +
          "it('passes the first time only', () => { const marker = path.join(process.env.HOME, 'ran'); const first = !fs.existsSync(marker); fs.writeFileSync(marker, ''); if (!first) throw new Error('ran before'); });\n" +
          "it('steady', () => {});\n",
      },
    });
    const judgement = await judge(repo, npmTest, (dir) => change(dir, { 'README.md': 'changed\n' }));
    assert.deepEqual(found(judgement), []);
    assert.deepEqual(judgement.flaky, [{ check: 'tests', id: 'test/once.test.js › passes the first time only' }]);
    assert.equal(judgement.baseline, 1);
  });

  describe('pytest', () => {
    const pytest: CheckSpec = { name: 'tests', run: `${PYTHON} -m pytest -q tests`, timeoutSecs: 120, required: true };
    const LIB = 'def total(values):\n    return sum(values)\n';
    const BROKEN = 'def total(values):\n    return sum(values) + (1 if len(values) == 3 else 0)\n';
    const TESTS =
      'from lib import total\n\ndef test_empty():\n    assert total([]) == 0\n\ndef test_three():\n    assert total([1, 2, 3]) == 6\n\ndef test_two():\n    assert total([1, 2]) == 3\n';
    const project = () =>
      createRepo({ files: { 'lib.py': LIB, 'tests/__init__.py': '', 'tests/test_total.py': TESTS, 'pytest.ini': '[pytest]\npythonpath = .\n' } });

    before(function () {
      try {
        execFileSync(PYTHON, ['-m', 'pytest', '--version'], { stdio: 'ignore' });
      } catch {
        this.skip();
      }
    });

    for (const [name, tamper] of [
      ['a conftest.py that patches the code', { 'tests/conftest.py': 'import lib\nlib.total = lambda values: sum(values)\n' }],
      ['pytestmark skipping the module', { 'tests/test_total.py': `import pytest\npytestmark = pytest.mark.skip\n${TESTS}` }],
      ['os._exit(0) before the assertions', { 'tests/test_total.py': `import os\nos._exit(0)\n${TESTS}` }],
      ['a pytest.py standing in for pytest', { 'pytest.py': 'import sys\nsys.exit(0)\n' }],
      ['the test deselected in pytest.ini', { 'pytest.ini': '[pytest]\npythonpath = .\naddopts = --deselect tests/test_total.py::test_three\n' }],
    ] as const) {
      it(`refuses ${name}`, async () => {
        const judgement = await judge(project(), pytest, (repo) => change(repo, { 'lib.py': BROKEN, ...tamper }));
        assert.deepEqual(found(judgement), ['test_regressed tests.test_total::test_three (failed)']);
      });
    }

    it('accepts three tests folded into one parametrized test', async () => {
      const folded =
        'import pytest\nfrom lib import total\n\n@pytest.mark.parametrize("values,expected", [([], 0), ([1, 2, 3], 6), ([1, 2], 3)])\ndef test_total(values, expected):\n    assert total(values) == expected\n';
      const judgement = await judge(project(), pytest, (repo) => change(repo, { 'tests/test_total.py': folded }));
      assert.deepEqual(found(judgement), []);
      assert.equal(judgement.passed, 3);
    });
  });
});
