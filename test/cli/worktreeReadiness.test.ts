import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MISSING_DEPENDENCIES_NOTE } from '../../src/checks/checkReport.js';
import { parseConfigText, projectConfigSchema } from '../../src/config/configFiles.js';
import { loadRunSettings } from '../../src/config/runSettings.js';
import { groupComparisonSchema } from '../../src/sessionFormat/candidateGroups.js';
import { runCli } from '../support/cliProcess.js';
import { carryOn, done, scriptedCliSetup } from '../support/scriptedAgent.js';
import { readJsonLines } from '../support/scriptedLoop.js';
import { createRepo, git, isolateHome, removeTempDirs, treeOf, writeFile } from '../support/testEnvironment.js';

/**
 * An npm project as a user has it: `npm test` runs mocha from node_modules, which git
 * ignores. The "mocha" installed is a small stand-in (no network here), reached as npm
 * reaches any package's program: through node_modules/.bin.
 */
function writeNpmProject(repo: string): void {
  writeFile(repo, '.gitignore', 'node_modules/\n');
  writeFile(
    repo,
    'package.json',
    JSON.stringify({ name: 'demo', version: '1.0.0', scripts: { test: 'mocha' }, devDependencies: { mocha: '^10.0.0' } }, null, 2),
  );
  writeFile(
    repo,
    'package-lock.json',
    JSON.stringify({ name: 'demo', version: '1.0.0', lockfileVersion: 3, requires: true, packages: { '': { name: 'demo', version: '1.0.0' } } }, null, 2),
  );
  writeFile(repo, 'test/demo.test.js', "it('works', () => {});\n");
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'an npm project');
  writeFile(repo, 'node_modules/mocha/package.json', JSON.stringify({ name: 'mocha', version: '10.0.0', bin: { mocha: 'bin/mocha.js' } }));
  // As mocha does: its JSON report where `--reporter-option output=` says (Codeloops reads it test by test), its summary printed.
  writeFile(
    repo,
    'node_modules/mocha/bin/mocha.js',
    [
      '#!/usr/bin/env node',
      "const output = process.argv.find((arg) => arg.startsWith('output='));",
      "const works = { title: 'works', fullTitle: 'works', file: require('path').resolve('test/demo.test.js') };",
      "if (output) require('fs').writeFileSync(output.slice('output='.length), JSON.stringify({ tests: [works], failures: [], pending: [] }));",
      "console.log('  1 passing');",
      '',
    ].join('\n'),
  );
  fs.chmodSync(path.join(repo, 'node_modules/mocha/bin/mocha.js'), 0o755);
  fs.mkdirSync(path.join(repo, 'node_modules/.bin'));
  fs.symlinkSync('../mocha/bin/mocha.js', path.join(repo, 'node_modules/.bin/mocha'));
}

/** The checks of the file `codeloops init` wrote, uncommented as a user would. */
function uncommentChecks(text: string): string {
  return text.replace(/^# (\[\[checks\]\]|name|run|timeout_secs|required)/gm, '$1').replace(/ +# false:.*$/gm, '');
}

/** The project file with its `[worktree]` section left out. */
function withoutWorktreeSection(text: string): string {
  return text.replace(/^\[worktree\][\s\S]*$/m, '');
}

describe('worktrees ready to work in (the built CLI, real npm and Python projects)', () => {
  after(removeTempDirs);

  it('init on an npm project copies node_modules into each worktree, runs nothing, and names npm ci as the other way', async () => {
    const home = isolateHome();
    home.restore();
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    writeNpmProject(repo);
    const result = await runCli(['init'], { cwd: repo, env: home.env });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Worktrees \(candidates, isolated checks\): node_modules copied into each\. See \[worktree\] in the file\./);
    const text = fs.readFileSync(path.join(repo, 'codeloops.toml'), 'utf8');
    assert.match(text, /^\[worktree\]\n(# .*\n)*copy = \["node_modules"\]$/m);
    assert.match(text, /`npm ci` \(package-lock\.json\) would install afresh/);
    // A copy runs no program: the file needs no trust as written.
    const settings = loadRunSettings({ workingDir: repo, env: home.env });
    assert.deepEqual([settings.checks, settings.worktree.copy, settings.worktree.setup], [[], ['node_modules'], null]);

    // A fresh clone has no node_modules: then each worktree installs, as a comment to uncomment.
    const pnpm = createRepo({ files: { 'package.json': '{"scripts":{"test":"vitest"}}', 'pnpm-lock.yaml': '' } });
    assert.equal((await runCli(['init'], { cwd: pnpm, env: home.env })).code, 0);
    const pnpmText = fs.readFileSync(path.join(pnpm, 'codeloops.toml'), 'utf8');
    assert.match(
      pnpmText,
      /^# \[worktree\]\n# No node_modules in your tree to copy: each worktree installs from pnpm-lock\.yaml\.\n# setup = "pnpm install --frozen-lockfile"$/m,
    );
    assert.deepEqual(loadRunSettings({ workingDir: pnpm, env: home.env }).worktree.setup, null);
  });

  it("init on a Python project suggests making its virtual environment in each worktree, never copying it, and its pytest check runs the venv's python", async () => {
    const home = isolateHome();
    home.restore();
    const repo = createRepo({
      gitignore: '.venv/\n',
      files: {
        'pyproject.toml': '[project]\nname = "demo"\n\n[tool.pytest.ini_options]\n',
        'requirements.txt': 'pytest\n',
        'test_demo.py': 'def test_it(): pass\n',
      },
    });
    execFileSync('python3', ['-m', 'venv', '--without-pip', path.join(repo, '.venv')]);
    const result = await runCli(['init'], { cwd: repo, env: home.env });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /a setup suggested as a comment: python3 -m venv \.venv && \.venv\/bin\/python -m pip install -r requirements\.txt/);
    const file = path.join(repo, 'codeloops.toml');
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /^# \[worktree\]\n# A virtual environment in \.venv: made afresh in each worktree, never copied/m);
    assert.match(text, /^# setup = "python3 -m venv \.venv && \.venv\/bin\/python -m pip install -r requirements\.txt"$/m);
    assert.doesNotMatch(text, /copy = \[.*\.venv/);
    // Uncommented, the setup and the check parse, and the check runs the environment the setup makes.
    const uncommented = uncommentChecks(text).replace(/^# (\[worktree\]$|setup =|setup_timeout_secs =)/gm, '$1');
    const parsed = parseConfigText(file, uncommented, projectConfigSchema);
    assert.deepEqual(
      parsed.checks?.map((check) => check.run),
      ['.venv/bin/python -m pytest'],
    );
    assert.equal(parsed.worktree?.setup, 'python3 -m venv .venv && .venv/bin/python -m pip install -r requirements.txt');
  });

  it('a candidate whose `npm test` finds no mocha in its worktree is told why, and with the section init wrote the same check passes there', async () => {
    // Run under `npm test` (as CI does), this process's PATH holds our own node_modules/.bin, where a mocha is:
    // the worktree's `npm test` would find it there. A user's shell has no such entry.
    const pathWithoutPackageBins = (process.env.PATH ?? '')
      .split(path.delimiter)
      .filter((entry) => !entry.split(path.sep).includes('node_modules'))
      .join(path.delimiter);
    const { repo, env, home, agent } = scriptedCliSetup({
      actor: [[{ write: { path: 'x.txt', content: 'x\n' } }]],
      critic: [[done('done', 0.9)], [carryOn('go on')]],
    });
    writeNpmProject(repo);
    assert.equal((await runCli(['init'], { cwd: repo, env })).code, 0);
    const written = fs.readFileSync(path.join(repo, 'codeloops.toml'), 'utf8');
    const sidecarEvents = (sessionId: string) => readJsonLines(path.join(home.dataHome, 'codeloops', 'sidecars', sessionId, 'events.jsonl'));
    const runCandidate = async () => {
      const result = await runCli(['run', '--candidates', 'command', '-n', '2', '-p', 'Make x', '--trust', '--json-output', '--no-judge'], {
        cwd: repo,
        env: { ...env, PATH: pathWithoutPackageBins },
      });
      assert.equal(result.code === 0 || result.code === 1, true, result.stderr);
      const [row] = groupComparisonSchema.parse(JSON.parse(result.stdout)).candidates;
      const checks = sidecarEvents(row!.session_id!).filter((event) => event.type === 'check_finished') as Array<{
        passed: boolean;
        exit_code: number;
        output: string;
      }>;
      return { row: row!, checks, log: result.stderr };
    };

    // Without [worktree]: the worktree has no node_modules.
    fs.writeFileSync(path.join(repo, 'codeloops.toml'), withoutWorktreeSection(uncommentChecks(written)));
    const userTree = treeOf(repo);
    const missing = await runCandidate();
    assert.equal(missing.row.status, 'max_iterations_reached', 'the gate refused the DONE the failing check does not back');
    assert.deepEqual(
      missing.checks.map((check) => [check.passed, check.exit_code]),
      [
        [false, 127],
        [false, 127],
      ],
    );
    assert.match(missing.checks[0]!.output, /mocha: not found/);
    assert.ok(missing.checks[0]!.output.endsWith(MISSING_DEPENDENCIES_NOTE), missing.checks[0]!.output);
    // What the user reads as the run goes, and what the critic and the next actor were told.
    assert.ok(missing.log.includes(MISSING_DEPENDENCIES_NOTE), missing.log);
    assert.ok(agent.prompt('critic', 1).includes(MISSING_DEPENDENCIES_NOTE));
    assert.ok(agent.prompt('actor', 2).includes(MISSING_DEPENDENCIES_NOTE));

    // With the section init wrote: node_modules is copied in, and npm test passes in the worktree.
    fs.writeFileSync(path.join(repo, 'codeloops.toml'), uncommentChecks(written));
    const readied = await runCandidate();
    assert.deepEqual(readied.checks[0] && [readied.checks[0].passed, readied.checks[0].exit_code], [true, 0]);
    assert.match(readied.checks[0]!.output, /1 passing/);
    const prepared = sidecarEvents(readied.row.session_id!).find((event) => event.type === 'worktree_prepared') as { copied: string[] };
    assert.deepEqual(prepared.copied, ['node_modules']);
    // The user's tree is as it was, node_modules and all (codeloops.toml aside, which the test rewrote).
    const { 'codeloops.toml': _before, ...before } = userTree;
    const { 'codeloops.toml': _after, ...after } = treeOf(repo);
    assert.deepEqual(after, before);
  });
});
