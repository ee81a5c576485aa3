import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { recogniseRunner } from '../../src/testRunners/recogniseRunner.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

/**
 * Which runner a check's command runs, as users write checks: the last step decides
 * (its exit code is the check's), package scripts are followed, wrappers are seen
 * through, and a command that only mentions a runner is not taken for one.
 */
describe('recogniseRunner: the test runner a check runs, from its command', () => {
  after(removeTempDirs);

  /** A folder whose package.json has these scripts. */
  function withScripts(scripts: Record<string, string>): string {
    const folder = tempDir('codeloops-runner-');
    fs.writeFileSync(path.join(folder, 'package.json'), JSON.stringify({ name: 'p', scripts }));
    return folder;
  }

  const empty = () => tempDir('codeloops-runner-');
  const seen = (command: string, folder = empty()) => {
    const found = recogniseRunner(command, folder);
    return found && [found.runner, found.via, found.script?.manager ?? null];
  };

  for (const [command, expected] of [
    ['python3 -m pytest -q tests', ['pytest', 'variables', null]],
    ['pytest', ['pytest', 'variables', null]],
    ['poetry run pytest -x', ['pytest', 'variables', null]],
    ['timeout 600 python -m pytest', ['pytest', 'variables', null]],
    ['npx mocha test/', ['mocha', 'arguments', null]],
    ['npm ci && npx jest --ci', ['jest', 'arguments', null]],
    ['CI=1 vitest run', ['vitest', 'arguments', null]],
    ['node --test test/', ['node', 'variables', null]],
    ['go test ./... 2>&1', ['go', 'variables', null]],
    ['cargo test --offline', ['cargo', 'output', null]],
  ] as const) {
    it(`${command} → ${expected[0]}`, () => assert.deepEqual(seen(command), expected));
  }

  it('follows package scripts: npm test, npm run, yarn, pnpm, through a script that runs another', () => {
    const folder = withScripts({ test: 'npm run unit', unit: 'mocha --recursive', spec: 'jest', lint: 'eslint .' });
    // Two scripts deep, arguments appended to `npm test` never reach mocha: known, but counted by its exit code.
    assert.deepEqual(seen('npm test', folder), ['mocha', 'none', 'npm']);
    assert.deepEqual(seen('npm run spec', folder), ['jest', 'arguments', 'npm']);
    assert.deepEqual(seen('yarn spec', folder), ['jest', 'arguments', 'yarn']);
    assert.deepEqual(seen('pnpm run unit', folder), ['mocha', 'arguments', 'pnpm']);
    assert.equal(seen('npm run lint', folder), null);
  });

  it('takes only the last step: a runner followed by a lint is counted by its exit code', () => {
    assert.equal(seen('jest && eslint .'), null);
    assert.equal(seen('echo pytest'), null);
    assert.equal(seen('make test'), null);
    assert.equal(seen('node build.js'), null);
    assert.equal(seen('go vet ./...'), null);
  });

  it('a runner named in the config is taken as said, its arguments out of reach when the command does not show it', () => {
    assert.deepEqual(recogniseRunner('make test', empty(), 'pytest'), { runner: 'pytest', via: 'variables', script: null });
    assert.deepEqual(recogniseRunner('make test', empty(), 'mocha'), { runner: 'mocha', via: 'arguments', script: null });
    assert.deepEqual(recogniseRunner('npx mocha', empty(), 'mocha'), { runner: 'mocha', via: 'arguments', script: null });
  });
});
