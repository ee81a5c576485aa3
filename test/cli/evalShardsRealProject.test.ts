import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { evalMergeAnswerSchema } from '../../src/sessionFormat/sessionBundle.js';
import { runCli } from '../support/cliProcess.js';
import { debianSource } from '../support/debianSources.js';
import { withMochaOnPath } from '../support/oracleJudging.js';
import { scriptedEvalAgents } from '../support/tinyMathEval.js';
import { git, removeTempDirs, tempDir, writeFile } from '../support/testEnvironment.js';

/**
 * An eval split in shards on a real project, not a toy: bytes 3.1.2 as Debian ships it
 * (`support/debianSources.ts`), its own mocha suite (`npm test`) the task's acceptance.
 * Two machines run a shard each (their own clones and data folders) and export it; a
 * third clone merges the bundles.
 */

const ACTOR = `import fs from 'node:fs';
fs.appendFileSync('index.js', '\\nfunction codeloopsHelper() {\\n  return 1;\\n}\\nvoid codeloopsHelper;\\n');
`;
const CRITIC = `process.stdout.write('Reviewed.\\n<decision>' + JSON.stringify({ type: 'done', summary: 'Added the helper.', confidence: 0.9 }) + '</decision>\\n');
`;

function machine(origin: string) {
  const setup = scriptedEvalAgents(ACTOR, CRITIC);
  const repo = path.join(tempDir('codeloops-clone-'), 'bytes');
  execFileSync('git', ['clone', '-q', origin, repo]);
  const suiteFolder = tempDir('codeloops-suite-');
  writeFile(
    suiteFolder,
    'suite.toml',
    `name = "bytes-helper"
repetitions = 1

[[tasks]]
name = "helper"
prompt = "Add a harmless helper function to index.js."
repository = ${JSON.stringify(repo)}
acceptance = "npm test"

[[configs]]
name = "first"
critic_model = "first"

[[configs]]
name = "second"
critic_model = "second"
`,
  );
  return { ...setup, repo, suite: path.join(suiteFolder, 'suite.toml') };
}

describe('codeloops eval across machines on a real project (bytes, npm test)', function () {
  this.timeout(900_000);
  // bytes' `npm test` runs mocha, which its tree does not install: this repository's own, on PATH, as the oracle's tests give it.
  withMochaOnPath(removeTempDirs);

  it('two shards exported and merged in a third clone: both runs, each accepted by the project’s own tests', async () => {
    const fetched = await debianSource({ name: 'node-bytes', version: '3.1.2-1', licence: 'LICENSE' });
    const origin = path.join(tempDir('codeloops-bytes-'), 'bytes');
    fs.cpSync(fetched.tree, origin, { recursive: true });
    git(origin, 'init', '-q', '-b', 'main');
    git(origin, 'add', '-A');
    git(origin, 'commit', '-q', '-m', 'bytes 3.1.2');

    const bundles = tempDir('codeloops-bundles-');
    const shards = await Promise.all(
      ['1/2', '2/2'].map(async (shard, index) => {
        const m = machine(origin);
        const bundle = path.join(bundles, `${'ab'[index]}.tar.gz`);
        const result = await runCli(['eval', m.suite, '--shard', shard, '--export', bundle], { cwd: m.repo, env: m.env });
        return { result, bundle };
      }),
    );
    for (const { result } of shards) assert.equal(result.code, 0, result.stderr);

    const home = machine(origin);
    const merged = await runCli(['eval', 'merge', ...shards.map(({ bundle }) => bundle), '--json'], { cwd: home.repo, env: home.env });
    assert.equal(merged.code, 0, merged.stderr);
    const answer = evalMergeAnswerSchema.parse(JSON.parse(merged.stdout));
    assert.equal(answer.complete, true);
    assert.deepEqual(answer.missing_runs, []);
    assert.deepEqual(answer.runs.map((run) => [run.config, run.task, run.outcome]).sort(), [
      ['first', 'helper', 'accepted'],
      ['second', 'helper', 'accepted'],
    ]);
    assert.deepEqual(
      answer.shards.map((shard) => [shard.shard, shard.runs]),
      [
        [{ index: 1, total: 2 }, 1],
        [{ index: 2, total: 2 }, 1],
      ],
    );
    // The acceptance was the project's own mocha suite, run on the helper the actor added.
    const evals = path.join(home.home.dataHome, 'codeloops', 'evals');
    const records = fs
      .readdirSync(evals, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => fs.readFileSync(path.join(entry.parentPath, entry.name), 'utf8'))
      .join('\n');
    const finished = records
      .split('\n')
      .filter((line) => line.includes('"run_finished"'))
      .map((line) => JSON.parse(line) as { config: string; acceptance_exit_code: number | null; acceptance_output: string });
    assert.deepEqual(finished.map((run) => [run.config, run.acceptance_exit_code]).sort(), [
      ['first', 0],
      ['second', 0],
    ]);
    for (const run of finished) assert.match(run.acceptance_output, /> bytes@3\.1\.2 test\n> mocha --check-leaks/);
    const sessions = await runCli(['sessions', 'list', '--json'], { cwd: home.repo, env: home.env });
    assert.equal((JSON.parse(sessions.stdout) as unknown[]).length, 2);
  });
});
