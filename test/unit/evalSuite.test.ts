import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { layerFromSuiteConfig, readSuite } from '../../src/config/evalSuite.js';
import { resolveLayers } from '../../src/config/runSettings.js';
import { evalResultsOf } from '../../src/eval/evalResults.js';
import type { EvalState } from '../../src/eval/evalRecord.js';
import { evalResultsSchema, type EvalOutcome, type EvalRecordLineOf } from '../../src/sessionFormat/evalRecords.js';
import { isCodeloopsError } from '../../src/sessionFormat/failures.js';
import { removeTempDirs, repoRoot, tempDir, writeFile } from '../support/testEnvironment.js';

const TASK = '[[tasks]]\nname = "t"\nprompt = "Do it."\nacceptance = "npm test"\n';
const CONFIG = '[[configs]]\nname = "c"\n';

function suiteAt(text: string, files: Record<string, string> = {}): string {
  const folder = tempDir('codeloops-suite-');
  for (const [name, content] of Object.entries(files)) writeFile(folder, name, content);
  writeFile(folder, 'suite.toml', text);
  return path.join(folder, 'suite.toml');
}

/** The ConfigError a suite is refused with: its code, the file it names and its message. */
function refusal(text: string, files: Record<string, string> = {}): { message: string; details: Record<string, unknown> } {
  const file = suiteAt(text, files);
  try {
    readSuite(file, '/somewhere');
  } catch (error) {
    assert.ok(isCodeloopsError(error));
    assert.equal(error.code, 'config_invalid');
    assert.equal(error.details.file, file);
    assert.ok(error.message.startsWith(`${file}: `), error.message);
    return { message: error.message, details: error.details as Record<string, unknown> };
  }
  assert.fail('the suite was accepted');
}

describe('eval suites: read strictly, paths from the suite’s folder', () => {
  after(removeTempDirs);

  it('reads the issue’s example: defaults, a prompt file, a repository relative to the suite, a config as a layer over the project', () => {
    const file = suiteAt(
      `name = "parser-tasks"
repetitions = 3

[[tasks]]
name = "iec-units"
prompt_file = "tasks/iec.md"
repository = "../project"
ref = "v1"
setup = "npm ci"
acceptance = "npm test"

[[tasks]]
name = "second"
prompt = "Another."
acceptance = "npm test"

[[configs]]
name = "claude-opus-critic"
actor = "claude"
critic = "codex"
critic_model = "opus"
max_iterations = 6
max_cost_usd = 2.5

[[configs.checks]]
name = "lint"
run = "npm run lint"
`,
      { 'tasks/iec.md': '\uFEFFAccept KiB.\n' },
    );
    const suite = readSuite(file, '/work/here');
    assert.equal(suite.repetitions, 3);
    assert.deepEqual(suite.tasks[0], {
      name: 'iec-units',
      prompt: 'Accept KiB.\n',
      repository: path.resolve(path.dirname(file), '../project'),
      ref: 'v1',
      setup: 'npm ci',
      acceptance: 'npm test',
    });
    assert.deepEqual(suite.tasks[1], { name: 'second', prompt: 'Another.', repository: '/work/here', ref: 'HEAD', setup: null, acceptance: 'npm test' });
    const settings = resolveLayers([{ source: 'project', agent: 'gemini', maxIterations: 20 }, layerFromSuiteConfig(suite.configs[0]!, suite.name)]);
    assert.equal(settings.actor.agent, 'claude');
    assert.equal(settings.critic.agent, 'codex');
    assert.equal(settings.critic.model, 'opus');
    assert.equal(settings.maxIterations, 6);
    assert.equal(settings.budget.maxCostUsd, 2.5);
    assert.deepEqual(
      settings.checks.map((check) => check.name),
      ['lint'],
    );
  });

  it('the example suite of examples/eval reads as its comments say', () => {
    const suite = readSuite(path.join(repoRoot(), 'examples', 'eval', 'suite.toml'), '/elsewhere');
    assert.deepEqual(
      suite.tasks.map((task) => [task.name, task.repository, task.prompt.startsWith('Make parse()')]),
      [
        ['iec-units', repoRoot(), true],
        ['negative-sizes', repoRoot(), true],
      ],
    );
    assert.deepEqual(
      suite.configs.map((config) => config.name),
      ['claude-opus-critic', 'codex-critic-with-checks'],
    );
  });

  it('refuses a task without acceptance, with both or neither prompt, unknown keys and names used twice, naming the key', () => {
    assert.match(refusal(`name = "s"\n[[tasks]]\nname = "t"\nprompt = "x"\n${CONFIG}`).message, /\[\[tasks\]\] "t" has no acceptance/);
    assert.equal(refusal(`name = "s"\n[[tasks]]\nname = "t"\nprompt = "x"\n${CONFIG}`).details.key, 'acceptance');
    assert.match(refusal(`name = "s"\n[[tasks]]\nname = "t"\nacceptance = "x"\n${CONFIG}`).message, /"t" needs exactly one of prompt and prompt_file/);
    assert.match(
      refusal(`name = "s"\n[[tasks]]\nname = "t"\nprompt = "x"\nprompt_file = "p.md"\nacceptance = "x"\n${CONFIG}`, { 'p.md': 'x' }).message,
      /exactly one of prompt and prompt_file/,
    );
    assert.match(refusal(`name = "s"\n${TASK}acceptence = "typo"\n${CONFIG}`).message, /unknown key "tasks\.0\.acceptence"/);
    assert.match(refusal(`name = "s"\n${TASK}${CONFIG}critic_modle = "opus"\n`).message, /unknown key "configs\.0\.critic_modle"/);
    assert.match(refusal(`name = "s"\n${TASK}${CONFIG}review = "pause"\n`).message, /unknown key "configs\.0\.review"/);
    assert.match(refusal(`name = "s"\n${TASK}${CONFIG}critic = "clade"\n`).message, /"clade" is not a known agent/);
    assert.match(refusal(`name = "s"\n${TASK}${TASK}${CONFIG}`).message, /two \[\[tasks\]\] are named "t"/);
    assert.match(refusal(`name = "s"\n${TASK}${CONFIG}${CONFIG}`).message, /two \[\[configs\]\] are named "c"/);
    assert.match(refusal(`name = "s"\n${CONFIG}`).message, /"tasks"/);
    assert.match(refusal(`name = "s"\n${TASK}repetitions = 0\n${CONFIG}`).message, /"tasks\.0\.repetitions"|unknown key/);
    assert.match(refusal(`name = "s"\nrepetitions = 0\n${TASK}${CONFIG}`).message, /"repetitions": must be a positive whole number/);
  });

  it('a prompt_file must stay in the suite’s folder, by name and by link', () => {
    const task = (promptFile: string) => `name = "s"\n[[tasks]]\nname = "t"\nprompt_file = "${promptFile}"\nacceptance = "x"\n${CONFIG}`;
    assert.match(refusal(task('../outside.md')).message, /prompt_file "\.\.\/outside\.md" leads out of the suite's folder/);
    const outside = tempDir('codeloops-outside-');
    writeFile(outside, 'secret.md', 'not a prompt');
    const file = suiteAt(task('linked.md'));
    fs.symlinkSync(path.join(outside, 'secret.md'), path.join(path.dirname(file), 'linked.md'));
    assert.throws(() => readSuite(file, '/'), /prompt_file .*linked\.md cannot be read/);
    assert.match(refusal(task('missing.md')).message, /cannot be read: it does not exist/);
    assert.match(refusal(task('empty.md'), { 'empty.md': '  \n' }).message, /is empty/);
  });
});

describe('eval results: every outcome counted, the rates over what they are rates of', () => {
  it('accepted, false_done, false_continue and failed; costs; a config with no runs yet', () => {
    const run = (config: string, repetition: number, outcome: EvalOutcome, cost: number | null, iterations: number): EvalRecordLineOf<'run_finished'> => ({
      type: 'run_finished',
      timestamp: '2026-01-01T00:00:00Z',
      task: 't',
      config,
      repetition,
      session_id: `s-${config}-${repetition}`,
      outcome,
      acceptance_passed: outcome === 'accepted' || outcome === 'false_continue',
      iterations,
      cost_usd: cost,
      duration_secs: 10 * repetition,
      loop_outcome: outcome === 'accepted' || outcome === 'false_done' ? 'success' : 'max_iterations_reached',
      error: null,
      error_code: null,
      acceptance_exit_code: 0,
      acceptance_output: '',
    });
    const runs = [run('a', 1, 'accepted', 1, 1), run('a', 2, 'false_done', 2, 2), run('a', 3, 'false_continue', null, 3), run('a', 4, 'failed', 1, 6)];
    const state: EvalState = {
      id: 'eval-x',
      started: {
        type: 'eval_started',
        timestamp: '2026-01-01T00:00:00Z',
        eval_id: 'eval-x',
        suite: 's',
        suite_file: '/s.toml',
        repetitions: 4,
        jobs: 1,
        tasks: [{ name: 't', prompt: 'p', repository: '/r', ref: 'HEAD', commit: 'c', setup: null, acceptance: 'x' }],
        configs: [
          { name: 'a', table: {} },
          { name: 'b', table: {} },
        ],
        pid: 1,
      },
      finished: new Map(runs.map((line) => [line.session_id!, line])),
      sessionIds: [],
      runner: null,
    };
    const results = evalResultsSchema.parse(evalResultsOf(state));
    assert.deepEqual(results.configs[0], {
      name: 'a',
      runs: 4,
      success_rate: 0.5,
      accepted_rate: 0.25,
      accepted_rate_interval: results.configs[0]!.accepted_rate_interval,
      false_done_rate: 0.5,
      false_continue_rate: 0.5,
      mean_iterations: 3,
      total_cost_usd: 4,
      cost_per_accepted_task_usd: 4,
      mean_duration_secs: 25,
    });
    assert.deepEqual(
      results.configs[0]!.accepted_rate_interval!.map((end) => end.toFixed(4)),
      ['0.0456', '0.6994'],
    );
    assert.deepEqual(results.configs[1], {
      name: 'b',
      runs: 0,
      success_rate: null,
      accepted_rate: null,
      accepted_rate_interval: null,
      false_done_rate: null,
      false_continue_rate: null,
      mean_iterations: null,
      total_cost_usd: null,
      cost_per_accepted_task_usd: null,
      mean_duration_secs: null,
    });
    assert.deepEqual(results.pairs, [{ a: 'a', b: 'b', accepted_rate_difference: null, interval: null }]);
    assert.deepEqual(
      results.runs.map((entry) => entry.repetition),
      [1, 2, 3, 4],
    );
  });
});
