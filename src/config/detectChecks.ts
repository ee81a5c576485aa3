import fs from 'node:fs';
import path from 'node:path';
import { findVirtualEnvironment, renderWorktreeSection, type WorktreeSuggestion } from './detectWorktree.js';
import { DEFAULT_CHECK_TIMEOUT_SECS } from './runSettings.js';

/** A check `codeloops init` found in a repository, to suggest (never to enable: the user decides). */
export interface DetectedCheck {
  name: string;
  run: string;
  /** What it was found from, for the comment above it. */
  foundIn: string;
}

/** What `npm init` writes as the test script: a placeholder that always fails, not a test suite. */
const NPM_PLACEHOLDER_TEST = /no test specified/;

/**
 * The test commands a repository's own files name: an npm `test` script, Cargo,
 * pytest, Go modules, a Makefile `test` target. Read from the top folder only, so a
 * monorepo's many packages do not each suggest their own.
 */
export function detectChecks(directory: string): DetectedCheck[] {
  const read = (name: string): string | null => {
    try {
      return fs.readFileSync(path.join(directory, name), 'utf8');
    } catch {
      return null;
    }
  };
  const exists = (name: string) => fs.existsSync(path.join(directory, name));
  const found: DetectedCheck[] = [];

  const packageJson = read('package.json');
  if (packageJson !== null) {
    let test: unknown;
    try {
      test = (JSON.parse(packageJson) as { scripts?: Record<string, unknown> }).scripts?.test;
    } catch {
      test = undefined; // a broken package.json suggests nothing
    }
    if (typeof test === 'string' && test.trim() !== '' && !NPM_PLACEHOLDER_TEST.test(test)) {
      const runner = exists('pnpm-lock.yaml') ? 'pnpm' : exists('yarn.lock') ? 'yarn' : exists('bun.lockb') || exists('bun.lock') ? 'bun' : 'npm';
      found.push({ name: 'tests', run: `${runner} test`, foundIn: 'the "test" script in package.json' });
    }
  }
  if (exists('Cargo.toml')) found.push({ name: 'cargo-test', run: 'cargo test', foundIn: 'Cargo.toml' });
  const pyproject = read('pyproject.toml');
  const setupCfg = read('setup.cfg');
  const pytestFrom = exists('pytest.ini')
    ? 'pytest.ini'
    : pyproject?.includes('[tool.pytest')
      ? 'pyproject.toml'
      : setupCfg?.includes('[tool:pytest]')
        ? 'setup.cfg'
        : exists('conftest.py')
          ? 'conftest.py'
          : null;
  // The project's own virtual environment, by its path: in a worktree, the one its setup made there.
  const venv = findVirtualEnvironment(directory);
  if (pytestFrom) found.push({ name: 'pytest', run: `${venv === null ? 'python' : `${venv}/bin/python`} -m pytest`, foundIn: pytestFrom });
  if (exists('go.mod')) found.push({ name: 'go-test', run: 'go test ./...', foundIn: 'go.mod' });
  const makefile = ['Makefile', 'makefile', 'GNUmakefile'].map((name) => [name, read(name)] as const).find(([, text]) => text !== null);
  if (makefile && /^test\s*:/m.test(makefile[1]!)) found.push({ name: 'make-test', run: 'make test', foundIn: `the "test" target in ${makefile[0]}` });
  return found;
}

/**
 * The project file `codeloops init` writes into a repository: everything that runs a
 * program commented out, so it runs nothing until the user uncomments it (and then
 * trusts it); only a `[worktree] copy` of the dependencies found is written as is.
 */
export function renderProjectConfig(checks: readonly DetectedCheck[], worktree: WorktreeSuggestion): string {
  const suggested =
    checks.length === 0
      ? `# No test command was found in this repository. Name yours, for example:
# [[checks]]
# name = "tests"
# run = "make check"
# timeout_secs = ${DEFAULT_CHECK_TIMEOUT_SECS}
# required = true`
      : checks
          .map(
            (check) => `# Found in ${check.foundIn}:
# [[checks]]
# name = "${check.name}"
# run = "${check.run}"
# timeout_secs = ${DEFAULT_CHECK_TIMEOUT_SECS}
# required = true        # false: shown to the critic, never blocking`,
          )
          .join('\n\n');
  return `# Codeloops settings for this repository; they override the global config.
# Commands named here run only once you trust this file: codeloops trust

# Checks run after the actor in every iteration, before the critic. A required
# check that fails refuses DONE: the loop goes on until it passes.
${suggested}

# Budgets: the loop ends when one is crossed, even in the middle of a turn.
# max_iterations = 10
# max_cost_usd = 5.0
# max_tokens = 2000000
# max_duration_secs = 3600

# A loop that goes in circles (no change, the same tree again, the same feedback
# or check failures) is stopped after this many iterations; "nudge" first tells
# the actor to change approach. 0 turns it off.
# [stall]
# unchanged_iterations = 3
# action = "stop"

${renderWorktreeSection(worktree)}
`;
}
