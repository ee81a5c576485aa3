// The whole test suite: build, type-check, lint, then every mocha tier, ending with the
// plain line CI reads: "N passed, N failed".
//   node test/run.mjs                 everything
//   node test/run.mjs unit loop       only these tiers
//   node test/run.mjs --grep text     only tests whose title matches
//   node test/run.mjs --reverse       every tier's tests in the opposite order (none may depend on another)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);

// controllers: the extension's controllers in plain Node, against the real runner and stubbed editor ports.
// server: `codeloops ui`, its API over HTTP and its page in Chromium.
// editor: the extension in a real VS Code (the server from code-server, in Chromium).
const TIERS = ['unit', 'loop', 'cli', 'controllers', 'e2e', 'server', 'editor'];
let grep;
let reverse = false;
const requested = [];
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === '--grep') grep = process.argv[++i];
  else if (process.argv[i] === '--reverse') reverse = true;
  else requested.push(process.argv[i]);
}
if (reverse) process.env.CODELOOPS_TEST_ORDER = 'reverse';
// The extension host suite runs in VS Code's process, which inherits this environment: it takes the grep from there.
if (grep) process.env.CODELOOPS_TEST_GREP = grep;

/** Suites and tests in the opposite order, all the way down. */
function reverseOrder(suite) {
  suite.tests.reverse();
  suite.suites.reverse();
  for (const child of suite.suites) reverseOrder(child);
}
const tiers = requested.length > 0 ? TIERS.filter((tier) => requested.includes(tier)) : TIERS;

let passed = 0;
let failed = 0;

function step(title, command, args) {
  process.stdout.write(`\n== ${title}\n`);
  const result = spawnSync(command, args, { stdio: 'inherit' });
  if (result.status === 0) {
    passed += 1;
    return true;
  }
  failed += 1;
  process.stdout.write(`${title} failed (exit ${result.status ?? result.signal})\n`);
  return false;
}

const built = step('build', process.execPath, ['esbuild.mjs', '--tests']);
// Each host on its own terms: the engine and extension without the DOM, the viewer without Node, the tests with both.
for (const project of ['src', 'webview-ui', '.'])
  step(`typecheck ${project}`, process.execPath, [require.resolve('typescript/bin/tsc'), '--noEmit', '-p', project]);
// The lint guards the layers (eslint.config.mjs); the formatter keeps one style.
const bin = (name) => path.join(root, 'node_modules', '.bin', process.platform === 'win32' ? `${name}.cmd` : name);
step('lint', bin('eslint'), ['.']);
step('format', bin('prettier'), ['--check', '--log-level', 'warn', '.']);

function collect(directory) {
  if (!fs.existsSync(directory)) return [];
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return collect(full);
    return entry.name.endsWith('.test.js') ? [full] : [];
  });
}

/**
 * Agent CLIs the end-to-end tests drive that cannot be devDependencies: opencode-ai
 * lists platform packages the registry mirror here does not have, which leaves a
 * lock file `npm ci` rejects. They are installed on first use into .cache/ instead.
 */
const CACHED_TOOLS = [{ spec: 'opencode-ai@1.18.33', bin: 'opencode' }];

function ensureCachedTools() {
  const prefix = path.join(root, '.cache', 'agents');
  for (const tool of CACHED_TOOLS) {
    if (fs.existsSync(path.join(prefix, 'node_modules', '.bin', tool.bin))) continue;
    process.stdout.write(`\n== installing ${tool.spec} into .cache/agents\n`);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const result = spawnSync(npm, ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', tool.spec], {
      stdio: 'inherit',
    });
    if (result.status !== 0) throw new Error(`could not install ${tool.spec}`);
  }
}

if (built && tiers.includes('e2e')) ensureCachedTools();

if (built) {
  const Mocha = require('mocha');
  for (const tier of tiers) {
    if (tier === 'editor') {
      // The mocha suite inside the extension host reports its own counts.
      process.stdout.write('\n== extension host suite (in a real VS Code)\n');
      const { runExtensionHostSuite } = require(path.resolve('out/test/editor/extensionHostSuite.js'));
      try {
        const results = await runExtensionHostSuite(path.resolve('test-output', 'vscode'));
        passed += results.passed;
        failed += results.failed;
      } catch (error) {
        process.stdout.write(`the extension host suite could not run: ${error.stack ?? error}\n`);
        failed += 1;
      }
    }
    const files = collect(path.join('out', 'test', tier)).sort();
    if (files.length === 0) continue;
    process.stdout.write(`\n== ${tier} tests\n`);
    const mocha = new Mocha({ timeout: tier === 'e2e' || tier === 'editor' ? 300_000 : tier === 'server' ? 120_000 : 60_000, reporter: 'spec', grep });
    for (const file of files) mocha.addFile(path.resolve(file));
    if (reverse) {
      await mocha.loadFilesAsync();
      reverseOrder(mocha.suite);
    }
    await new Promise((resolve) => {
      const runner = mocha.run(() => resolve());
      runner.on('pass', () => (passed += 1));
      runner.on('fail', () => (failed += 1));
    });
    mocha.dispose();
  }
}

process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exit(failed === 0 ? 0 : 1);
