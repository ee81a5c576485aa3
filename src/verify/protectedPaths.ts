import ignore, { type Ignore } from 'ignore';
import path from 'node:path';

/**
 * Which files the gate rests on, as gitignore-style patterns from the repository's
 * top: tests and CI for the ecosystems the tree shows, `codeloops.toml`, and the
 * user's own `[verify] protected`. What the checks' commands run is found apart
 * (`checkCommandSources`), file by file.
 */

/** What a protected file is, which decides what counts as weakening it. */
export type ProtectedRole = 'config' | 'ci' | 'runner' | 'test';

const CI_PATTERNS = [
  '.github/workflows/',
  '.gitlab-ci.yml',
  '.gitlab-ci/',
  '.circleci/',
  'azure-pipelines.yml',
  '.azure-pipelines/',
  'Jenkinsfile',
  '.travis.yml',
  '.buildkite/',
  'bitbucket-pipelines.yml',
  '.drone.yml',
  '.woodpecker.yml',
  '.woodpecker/',
];

/** Test files and folders per ecosystem, and the file that says the tree is one. */
const ECOSYSTEMS: readonly { marker: RegExp; tests: string[] }[] = [
  // npm: jest, mocha, vitest, node:test, playwright.
  { marker: /(^|\/)package\.json$/, tests: ['test/', 'tests/', '__tests__/', 'spec/', '*.test.*', '*.spec.*', 'e2e/'] },
  // pytest and unittest.
  {
    marker: /(^|\/)(pyproject\.toml|setup\.py|setup\.cfg|pytest\.ini|tox\.ini|conftest\.py)$|\.py$/,
    tests: ['test_*.py', '*_test.py', 'tests/', 'test/', 'conftest.py'],
  },
  { marker: /(^|\/)go\.mod$/, tests: ['*_test.go', 'testdata/'] },
  // Cargo's integration tests; unit tests live in src/ files, where only their skip markers are judged.
  { marker: /(^|\/)Cargo\.toml$/, tests: ['tests/'] },
];

/** Test runners' own configuration: changing it can leave tests out as surely as deleting them. */
const RUNNER_CONFIG_PATTERNS = ['jest.config.*', 'vitest.config.*', 'vitest.workspace.*', '.mocharc*', 'playwright.config.*', 'karma.conf.*', 'pytest.ini'];

export class ProtectedPaths {
  private readonly config = ignore().add('codeloops.toml');
  private readonly ci: Ignore = ignore().add(CI_PATTERNS);
  private readonly runners: Ignore = ignore();
  private readonly tests: Ignore;
  /** Every pattern, for the record (`run_started.guards.verify`) and the critic. */
  readonly patterns: readonly string[];

  constructor(testPatterns: readonly string[], runnerPatterns: readonly string[], userPatterns: readonly string[]) {
    this.runners.add(runnerPatterns);
    this.tests = ignore().add([...testPatterns, ...userPatterns]);
    this.patterns = ['codeloops.toml', ...CI_PATTERNS, ...runnerPatterns, ...testPatterns, ...userPatterns];
  }

  /** The defaults for a tree (its file paths from the repository's top) and the user's patterns. */
  static of(treeFiles: readonly string[], userPatterns: readonly string[]): ProtectedPaths {
    const tests = new Set<string>();
    for (const ecosystem of ECOSYSTEMS) if (treeFiles.some((file) => ecosystem.marker.test(file))) for (const pattern of ecosystem.tests) tests.add(pattern);
    return new ProtectedPaths([...tests], tests.size > 0 ? RUNNER_CONFIG_PATTERNS : [], userPatterns);
  }

  /** What the file is to the gate; undefined when it is not protected. */
  roleOf(file: string): ProtectedRole | undefined {
    const relative = path.posix.normalize(file);
    if (this.config.ignores(relative)) return 'config';
    if (this.ci.ignores(relative)) return 'ci';
    if (this.runners.ignores(relative)) return 'runner';
    if (this.tests.ignores(relative)) return 'test';
    return undefined;
  }
}
