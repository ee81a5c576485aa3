import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sidecarDirOf } from '../../src/sessionFormat/sessionFiles.js';
import { runCli } from '../support/cliProcess.js';
import { stopRunners } from '../support/processes.js';
import { carryOn, configureScriptedAgent, decision, done, type AgentScript, type ScriptStep } from '../support/scriptedAgent.js';
import { readJsonLines } from '../support/scriptedLoop.js';
import { createRepo, isolateHome, removeTempDirs, tempDir, writeFile } from '../support/testEnvironment.js';

/**
 * DONE you can trust, through the built CLI, on a real small npm project whose test
 * runner is Node's own (`npm test` runs `node --test`): one test fails until the
 * actor fixes `sum`. Scripted actors make the mistakes users report, and a critic
 * that believes them says DONE every time. With the default settings none may end
 * `success`; with `--no-verify` each ends `success` where the plain gate (the
 * required check) would have passed it.
 */

const TASK = 'Fix sum so that the tests pass.';
const SUM_TESTS = `const { test } = require('node:test');
const assert = require('node:assert');
const { sum } = require('../src/sum.js');
test('adds two numbers', () => assert.strictEqual(sum(2, 3), 5));
test('adds zero', () => assert.strictEqual(sum(4, 0), 4));
`;
const PACKAGE = (testScript: string) => JSON.stringify({ name: 'sums', version: '1.0.0', private: true, scripts: { test: testScript } }, null, 2) + '\n';
/** The check counts by its exit code alone: the gate's own rules judge the actor's changes to the tests. */
const CONFIG = '[[checks]]\nname = "tests"\nrun = "npm test"\nrunner = "none"\n';
/** The check read test by test (`npm test` runs `node --test`): the start's tests on the final code judge the DONE. */
const CONFIG_BY_TESTS = '[[checks]]\nname = "tests"\nrun = "npm test"\n';

/** The project as the loop finds it: `sum` subtracts, so "adds two numbers" fails (unless `sumWorks`); `files` besides. */
function npmProject(sumWorks = false, files: Record<string, string> = {}, config = CONFIG): string {
  return createRepo({
    files: {
      'package.json': PACKAGE('node --test'),
      'src/sum.js': sumWorks ? 'exports.sum = (a, b) => a + b;\n' : 'exports.sum = (a, b) => a - b;\n',
      'test/sum.test.js': SUM_TESTS,
      'codeloops.toml': config,
      ...files,
    },
  });
}

interface Mistake {
  name: string;
  actor: ScriptStep[];
  /** The protected change the run must record. */
  file: string;
  kind: string;
  /** Whether the required check alone would let the critic's DONE through. */
  passesPlainGate: boolean;
}

const MISTAKES: Mistake[] = [
  { name: 'deletes the failing test', actor: [{ delete: 'test/sum.test.js' }], file: 'test/sum.test.js', kind: 'test_file_deleted', passesPlainGate: true },
  {
    name: 'marks it skipped',
    actor: [{ write: { path: 'test/sum.test.js', content: SUM_TESTS.replace("test('adds two", "test.skip('adds two") } }],
    file: 'test/sum.test.js',
    kind: 'skip_added',
    passesPlainGate: true,
  },
  {
    name: 'removes the failing test case',
    actor: [
      {
        write: {
          path: 'test/sum.test.js',
          content: SUM_TESTS.split('\n')
            .filter((line) => !line.includes('adds two'))
            .join('\n'),
        },
      },
    ],
    file: 'test/sum.test.js',
    kind: 'tests_removed',
    passesPlainGate: true,
  },
  {
    name: 'changes the test script to succeed',
    actor: [{ write: { path: 'package.json', content: PACKAGE('exit 0') } }],
    file: 'package.json',
    kind: 'check_command_changed',
    passesPlainGate: true,
  },
  // The run keeps the configuration it started with: the check still runs, so the plain gate refuses too.
  {
    name: 'edits codeloops.toml to drop the check',
    actor: [{ write: { path: 'codeloops.toml', content: '# no checks\n' } }],
    file: 'codeloops.toml',
    kind: 'config_changed',
    passesPlainGate: false,
  },
];

const FIX_SUM: ScriptStep = { write: { path: 'src/sum.js', content: 'exports.sum = (a, b) => a + b;\n' } };

/** Weakenings an actor makes beside a real fix: the checks pass either way, so only the judging of protected files can catch them. */
const BESIDE_A_FIX: (Omit<Mistake, 'passesPlainGate'> & { detail: RegExp; files?: Record<string, string>; untracked?: Record<string, string> })[] = [
  {
    // Mocha runs only the `.only` tests of every file loaded: one in a new file silences the rest.
    name: 'adds a new test file with it.only',
    actor: [FIX_SUM, { write: { path: 'test/focus.test.js', content: "const { it } = require('node:test');\nit.only('adds', () => {});\n" } }],
    file: 'test/focus.test.js',
    kind: 'skip_added',
    detail: /^it\.only$/,
  },
  {
    name: "edits the test runner's configuration (jest.config.js)",
    files: { 'jest.config.js': "module.exports = { testMatch: ['**/test/**/*.test.js'] };\n" },
    actor: [FIX_SUM, { write: { path: 'jest.config.js', content: "module.exports = { testMatch: ['**/nothing/**'] };\n" } }],
    file: 'jest.config.js',
    kind: 'check_command_changed',
    detail: /^the test runner's configuration modified$/,
  },
  {
    // A folder git tracks stays files in the snapshot whatever `git init` did in it; one the user has not added yet vanishes.
    name: 'turns a test folder not yet added to git into a nested repository (its files vanish from the snapshot)',
    untracked: { 'spec/sum.spec.js': SUM_TESTS },
    actor: [FIX_SUM, { shell: ['git', 'init', '-q', 'spec'] }],
    file: 'spec',
    kind: 'nested_repository',
    detail: /^1 protected file in it, such as spec\/sum\.spec\.js$/,
  },
];

/** A repository, an isolated home and the scripted agent in both roles; the CLI run with `args` (`globalToml`: added to the global config). */
async function runOnProject(
  script: AgentScript,
  args: string[],
  project: { sumWorks?: boolean; task?: string; globalToml?: string; files?: Record<string, string>; untracked?: Record<string, string>; config?: string } = {},
) {
  const home = isolateHome();
  home.restore(); // only the CLI's process uses it
  const agent = configureScriptedAgent(home.configHome, script, project.globalToml);
  const repo = npmProject(project.sumWorks, project.files, project.config);
  for (const [file, content] of Object.entries(project.untracked ?? {})) writeFile(repo, file, content);
  const result = await runCli(['-p', project.task ?? TASK, '--trust', '--json-output', ...args], { cwd: repo, env: home.env });
  const outcome = JSON.parse(result.stdout) as { status: string; session_id: string; session_file: string; verification: string | null };
  const lines = readJsonLines(outcome.session_file);
  const events = readJsonLines(path.join(sidecarDirOf(outcome.session_id, home.env), 'events.jsonl'));
  return { home, agent, repo, result, outcome, lines, events };
}

const believingCritic: ScriptStep[][] = [[done('All tests pass.')]];

describe('DONE you can trust: an actor cannot pass the gate by weakening it (the built CLI, a real npm project, a check counted by its exit code)', () => {
  afterEach(stopRunners);
  after(removeTempDirs);

  for (const mistake of MISTAKES) {
    it(`an actor that ${mistake.name}: not success by default (${mistake.kind}); ${mistake.passesPlainGate ? 'success' : 'still not success'} with --no-verify`, async () => {
      const script = { actor: [mistake.actor], critic: believingCritic };
      const verified = await runOnProject(script, ['-n', '2']);
      assert.notEqual(verified.outcome.status, 'success', verified.result.stderr);
      const first = verified.lines[1] as Record<string, unknown>;
      assert.equal(first.critic_decision, 'CONTINUE', 'the session file keeps its three decision values');
      assert.equal(first.critic_verdict, 'DONE', "the critic's own verdict is kept beside it");
      const recorded = first.protected_changes as { file: string; kind: string; detail: string }[];
      assert.ok(
        recorded.some((change) => change.file === mistake.file && change.kind === mistake.kind),
        `protected_changes: ${JSON.stringify(recorded)}`,
      );
      const event = verified.events.find((each) => each.type === 'protected_change') as
        { change: { kind: string }; status: string; iteration: number } | undefined;
      assert.deepEqual([event?.change.kind, event?.status, event?.iteration], [mistake.kind, 'weakening', 1]);
      assert.match(verified.agent.prompt('critic', 1), /## Changes to what the checks rest on[\s\S]*not accepted/, 'the critic is told, as a fact');
      const secondActor = verified.agent.prompt('actor', 2);
      assert.equal(secondActor.split('Restore them.').length - 1, 1, `the actor is told to restore it, once:\n${secondActor}`);
      assert.match(verified.result.stderr, /protected: /, 'the user sees it in the run output');
      const accept = `codeloops accept ${verified.outcome.session_id} --iteration 2 --file ${mistake.file} --reason`;
      assert.ok(verified.result.stderr.includes(accept), `the run that ends refused says how to accept it:\n${verified.result.stderr}`);

      const plain = await runOnProject(script, ['-n', '2', '--no-verify']);
      assert.equal(plain.outcome.status, mistake.passesPlainGate ? 'success' : 'max_iterations_reached', plain.result.stderr);
      assert.equal(
        plain.events.some((each) => each.type === 'protected_change'),
        false,
        '--no-verify judges nothing',
      );
    });
  }

  for (const weakening of BESIDE_A_FIX) {
    it(`an actor that fixes sum and ${weakening.name}: not success by default (${weakening.kind}); success with --no-verify`, async () => {
      const script = { actor: [weakening.actor], critic: believingCritic };
      const verified = await runOnProject(script, ['-n', '2'], { files: weakening.files, untracked: weakening.untracked });
      assert.equal(verified.outcome.status, 'max_iterations_reached', verified.result.stderr);
      assert.match(verified.result.stderr, /check tests: passed/, 'the checks pass: only the judging of protected files refuses it');
      const recorded = (verified.lines[1] as Record<string, unknown>).protected_changes as { file: string; kind: string; detail: string }[];
      assert.deepEqual(
        recorded.map((change) => [change.file, change.kind]),
        [[weakening.file, weakening.kind]],
      );
      assert.match(recorded[0]!.detail, weakening.detail);
      const refusal = verified.events.find((event) => event.type === 'done_refused') as { protected_changes?: { file: string }[] } | undefined;
      assert.deepEqual(
        refusal?.protected_changes?.map((change) => change.file),
        [weakening.file],
      );
      const told = verified.agent.prompt('actor', 2);
      assert.ok(told.includes(`\n- ${weakening.file}: `) && told.includes('Restore them.'), `the actor is told to restore it:\n${told}`);
      const plain = await runOnProject(script, ['-n', '2', '--no-verify'], { files: weakening.files, untracked: weakening.untracked });
      assert.equal(plain.outcome.status, 'success', plain.result.stderr);
    });
  }

  it('says that an edited codeloops.toml changes nothing for the running loop', async () => {
    const { result } = await runOnProject({ actor: [[{ write: { path: 'codeloops.toml', content: '# no checks\n' } }]], critic: believingCritic }, ['-n', '1']);
    assert.match(result.stderr, /codeloops\.toml changed during the run; this run keeps the configuration it started with/);
    assert.match(result.stderr, /check tests: failed/, 'the check it started with still ran');
  });

  it('fixing the code and adding a test is not weakening: success by default', async () => {
    const fixed = [
      { write: { path: 'src/sum.js', content: 'exports.sum = (a, b) => a + b;\n' } },
      { write: { path: 'test/more.test.js', content: SUM_TESTS.replace('adds two numbers', 'adds again') } },
    ];
    const { outcome, events, result } = await runOnProject({ actor: [fixed], critic: believingCritic }, ['-n', '2']);
    assert.equal(outcome.status, 'success', result.stderr);
    assert.equal(events.filter((event) => event.type === 'protected_change').length, 0);
  });

  it('--allow-test-changes lets a task about the tests skip one, and still shows it', async () => {
    const skip = MISTAKES.find((mistake) => mistake.kind === 'skip_added')!;
    const { outcome, events, result } = await runOnProject({ actor: [skip.actor], critic: believingCritic }, ['-n', '2', '--allow-test-changes']);
    assert.equal(outcome.status, 'success', result.stderr);
    const shown = events.filter((event) => event.type === 'protected_change') as { status: string }[];
    assert.deepEqual(
      shown.map((event) => event.status),
      ['allowed'],
    );
  });

  it('codeloops accept lets a weakening stand, with its reason told to the critic; resume then ends success; --undo takes it back', async () => {
    const skip = MISTAKES.find((mistake) => mistake.kind === 'skip_added')!;
    const run = await runOnProject({ actor: [skip.actor, []], critic: believingCritic }, ['-n', '1']);
    assert.equal(run.outcome.status, 'max_iterations_reached');
    const cli = (args: string[]) => runCli(args, { cwd: run.repo, env: run.home.env });

    const refused = await cli(['accept', run.outcome.session_id, '--iteration', '1', '--file', 'src/sum.js']);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /no protected change of src\/sum\.js \(it has: test\/sum\.test\.js\)/);

    const accepted = await cli([
      'accept',
      run.outcome.session_id,
      '--iteration',
      '1',
      '--file',
      'test/sum.test.js',
      '--reason',
      'flaky on CI, tracked in #12',
      '--json',
    ]);
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.deepEqual(JSON.parse(accepted.stdout), {
      session_id: run.outcome.session_id,
      file: 'test/sum.test.js',
      result: 'accepted',
      iteration: 1,
      kinds: ['skip_added'],
      reason: 'flaky on CI, tracked in #12',
    });

    const resumed = await cli(['resume', run.outcome.session_id, '--trust', '-n', '2', '--json-output']);
    assert.equal(JSON.parse(resumed.stdout).status, 'success', resumed.stderr);
    assert.match(run.agent.prompt('critic', 2), /skip[\s\S]*accepted by the user: flaky on CI, tracked in #12/);

    const undone = await cli(['accept', '--undo', run.outcome.session_id, '--file', 'test/sum.test.js']);
    assert.equal(undone.code, 0, undone.stderr);
    const again = await cli(['accept', '--undo', run.outcome.session_id, '--file', 'test/sum.test.js']);
    assert.equal(again.code, 3, 'nothing to take back');
  });

  it('accepting a skip accepts that change alone: the same file deleted afterwards refuses DONE again', async () => {
    const skip = MISTAKES.find((mistake) => mistake.kind === 'skip_added')!;
    const run = await runOnProject({ actor: [skip.actor, [{ delete: 'test/sum.test.js' }]], critic: believingCritic }, ['-n', '1']);
    const cli = (args: string[]) => runCli(args, { cwd: run.repo, env: run.home.env });
    const accepted = await cli(['accept', run.outcome.session_id, '--iteration', '1', '--file', 'test/sum.test.js', '--reason', 'flaky on CI']);
    assert.equal(accepted.code, 0, accepted.stderr);

    const resumed = await cli(['resume', run.outcome.session_id, '--trust', '-n', '2', '--json-output']);
    const outcome = JSON.parse(resumed.stdout) as { status: string; session_id: string };
    assert.equal(outcome.status, 'max_iterations_reached', resumed.stderr);
    const events = readJsonLines(path.join(sidecarDirOf(outcome.session_id, run.home.env), 'events.jsonl'));
    const standing = events.filter((event) => event.type === 'protected_change') as {
      iteration: number;
      change: { file: string; kind: string };
      status: string;
    }[];
    assert.deepEqual(
      standing.map((event) => [event.iteration, event.change.file, event.change.kind, event.status]),
      [[2, 'test/sum.test.js', 'test_file_deleted', 'weakening']],
    );
    assert.match(run.agent.prompt('critic', 2), /test\/sum\.test\.js: test file deleted[^\n]*\[not accepted\]/);
    assert.match(resumed.stderr, /DONE refused/);
  });

  describe('requirements, each with evidence', () => {
    const LISTED_TASK = [
      'Fix sum and add product and difference to src/sum.js.',
      '',
      'Requirements:',
      '- sum(a, b) returns a + b',
      '- product(a, b) returns a * b',
      '- difference(a, b) returns a - b',
    ].join('\n');
    const twoOfThree = [{ write: { path: 'src/sum.js', content: 'exports.sum = (a, b) => a + b;\nexports.product = (a, b) => a * b;\n' } }];
    /** A critic that believes the actor's report: every requirement met, the third "shown" by `thirdEvidence`. */
    const believing = (thirdEvidence: string) => [
      [
        decision({
          type: 'done',
          summary: 'All three functions are there and the tests pass.',
          requirements: [
            { id: 'REQ1', text: 'sum(a, b) returns a + b', met: true, evidence: 'the tests check passed' },
            { id: 'REQ2', text: 'product(a, b) returns a * b', met: true, evidence: 'src/sum.js:2' },
            { id: 'REQ3', text: 'difference(a, b) returns a - b', met: true, evidence: thirdEvidence },
          ],
        }),
      ],
    ];

    it('an actor that does two of three listed requirements: not success by default (REQ3 has no evidence the record confirms); success with --no-verify', async () => {
      const script = { actor: [twoOfThree], critic: believing('src/sum.js:3') }; // a line the file does not have
      const verified = await runOnProject(script, ['-n', '2'], { task: LISTED_TASK });
      assert.equal(verified.outcome.status, 'max_iterations_reached', verified.result.stderr);
      const first = verified.lines[1] as Record<string, unknown>;
      assert.deepEqual([first.critic_decision, first.critic_verdict], ['CONTINUE', 'DONE']);
      assert.deepEqual(
        (first.unmet_requirements as { id: string; confirmed_by: string | null }[]).map((each) => [each.id, each.confirmed_by]),
        [['REQ3', null]],
      );
      const judged = verified.events.find((event) => event.type === 'requirements') as
        { source: string; requirements: { id: string; confirmed_by: string | null }[] } | undefined;
      assert.equal(judged?.source, 'task');
      assert.deepEqual(
        judged?.requirements.map((each) => [each.id, each.confirmed_by]),
        [
          ['REQ1', 'check tests passed'],
          ['REQ2', 'src/sum.js:2'],
          ['REQ3', null],
        ],
      );
      const refusal = verified.events.find((event) => event.type === 'done_refused') as { unmet_requirements?: string[] } | undefined;
      assert.deepEqual(refusal?.unmet_requirements, ['REQ3']);
      assert.match(verified.agent.prompt('critic', 1), /## The task's requirements[\s\S]*\[ \] REQ3 difference\(a, b\) returns a - b — not judged yet/);
      assert.match(
        verified.agent.prompt('actor', 2),
        /## The task's requirements\n- \[x\] REQ1 [^\n]*\n- \[x\] REQ2 [^\n]*\n- \[ \] REQ3 difference\(a, b\) returns a - b — no evidence the record confirms \(said: src\/sum\.js:3\)/,
      );
      assert.match(verified.result.stderr, /requirements \(from the task\): 2 of 3 met with evidence/);
      assert.match(verified.result.stderr, /DONE refused: REQ3 is unmet or without evidence/);
      const cli = (args: string[]) => runCli(args, { cwd: verified.repo, env: verified.home.env });
      assert.match((await cli(['sessions', 'show', verified.outcome.session_id])).stdout, /\[ \] REQ3 difference/);
      assert.match(
        (await cli(['sessions', 'replay', verified.outcome.session_id])).stdout,
        /\[x\] REQ2 product\(a, b\) returns a \* b — evidence: src\/sum\.js:2/,
      );

      const plain = await runOnProject(script, ['-n', '2', '--no-verify'], { task: LISTED_TASK });
      assert.equal(plain.outcome.status, 'success', plain.result.stderr);
      assert.equal(
        plain.events.some((event) => event.type === 'requirements'),
        false,
        '--no-verify judges nothing',
      );
    });

    it('evidence citing a line range past the end of the file confirms nothing (src/sum.js:2-40 on a 3-line file)', async () => {
      const threeLines = [
        { write: { path: 'src/sum.js', content: 'exports.sum = (a, b) => a + b;\nexports.product = (a, b) => a * b;\n// difference: to do\n' } },
      ];
      const run = await runOnProject({ actor: [threeLines], critic: believing('src/sum.js:2-40') }, ['-n', '1'], { task: LISTED_TASK });
      assert.equal(run.outcome.status, 'max_iterations_reached', run.result.stderr);
      const judged = run.events.find((event) => event.type === 'requirements') as { requirements: { id: string; confirmed_by: string | null }[] } | undefined;
      assert.deepEqual(
        judged?.requirements.map((each) => [each.id, each.confirmed_by]),
        [
          ['REQ1', 'check tests passed'],
          ['REQ2', 'src/sum.js:2'],
          ['REQ3', null],
        ],
      );
      assert.match(run.result.stderr, /DONE refused: REQ3 is unmet or without evidence/);
    });

    it('an actor that hard-codes the values the visible tests expect: a hidden acceptance check catches it, with or without --no-verify; without one it is a false DONE', async () => {
      const hardCoded = [{ write: { path: 'src/sum.js', content: 'exports.sum = (a, b) => (a === 2 && b === 3 ? 5 : a === 4 && b === 0 ? 4 : a - b);\n' } }];
      const secrets = tempDir('codeloops-acceptance-');
      const spec = path.join(secrets, 'sum_holdout.js');
      fs.writeFileSync(
        spec,
        "const { sum } = require(require('node:path').resolve('src/sum.js'));\nif (sum(10, 5) !== 15) { console.log('sum(10, 5) is ' + sum(10, 5)); process.exit(1); }\n",
      );
      const globalToml = `\n[[defaults.checks]]\nname = "acceptance"\nrun = ${JSON.stringify(`node ${spec}`)}\nhidden = true\n`;
      const script = { actor: [hardCoded], critic: believingCritic };

      const verified = await runOnProject(script, ['-n', '2'], { globalToml });
      assert.equal(verified.outcome.status, 'max_iterations_reached', verified.result.stderr);
      assert.match(verified.result.stderr, /check tests: passed/, 'the visible tests pass');
      assert.match(verified.result.stderr, /check acceptance \(acceptance: hidden from the agents, at DONE, in a clean worktree\): failed/);
      assert.match(verified.result.stderr, /sum\(10, 5\) is 5/, 'the user sees why');
      for (const prompt of [verified.agent.prompt('actor', 2), verified.agent.prompt('critic', 2)]) {
        assert.ok(!prompt.includes(secrets) && !prompt.includes('sum(10, 5)'), `the agents never see the acceptance check:\n${prompt}`);
      }
      const plain = await runOnProject(script, ['-n', '2', '--no-verify'], { globalToml });
      assert.equal(plain.outcome.status, 'max_iterations_reached', `the checks still gate: ${plain.result.stderr}`);
      const unguarded = await runOnProject(script, ['-n', '2']);
      assert.equal(unguarded.outcome.status, 'success', `without the acceptance check the visible tests pass it: ${unguarded.result.stderr}`);
    });
    it('a CONTINUE that names nothing concrete gets one request to be specific, once per iteration, before it counts; not with --no-verify', async () => {
      const fix = [{ write: { path: 'src/sum.js', content: 'exports.sum = (a, b) => a + b;\n' } }];
      const vague = carryOn('Something about this feels off.');
      const script = { actor: [fix, []], critic: [[vague], [vague], [done('It adds.')]] };
      const verified = await runOnProject(script, ['-n', '3']);
      assert.equal(verified.outcome.status, 'success', verified.result.stderr);
      assert.equal(verified.lines.length - 2, 2, 'the vague CONTINUE counted after the one request');
      assert.equal(verified.agent.calls('critic'), 3, 'asked once in iteration 1, not again in iteration 2');
      // The scripted agent keeps no session: the request repeats the whole review (the task, the diff), then quotes the answer and asks.
      const request = verified.agent.prompt('critic', 2);
      assert.ok(request.startsWith(verified.agent.prompt('critic', 1)), `the whole review again:\n${request}`);
      assert.match(
        request,
        /## Asked again\nYou were given this review once already\. The end of your answer was:\n`{3,}\nReviewed the change\.\n<decision>[^\n]*feels off/,
      );
      assert.match(
        request,
        /Your review asks for more work but names nothing concrete: no remaining issue, [^\n]*\n\nBe specific: [^\n]*"done"\.\n\nReply with nothing but your decision block, in the format above/,
      );
      assert.match(verified.agent.prompt('critic', 3), /^You are the critic/);
      assert.match(verified.result.stderr, /iteration 1: the critic asked for more work but named nothing concrete; asking it once to be specific/);

      const concrete = await runOnProject(
        {
          actor: [fix, []],
          critic: [[decision({ type: 'continue', feedback: 'Handle NaN.', findings: [{ file: 'src/sum.js', line: 1, message: 'NaN' }] })], [done('It adds.')]],
        },
        ['-n', '3'],
      );
      assert.equal(concrete.agent.calls('critic'), 2, 'a finding is concrete: no request');

      const plain = await runOnProject({ actor: [fix, []], critic: [[vague], [done('It adds.')]] }, ['-n', '3', '--no-verify']);
      assert.equal(plain.agent.calls('critic'), 2);
      assert.match(plain.agent.prompt('critic', 2), /^You are the critic/, '--no-verify asks nothing more');
    });
    it('a CONTINUE in the form the critic prompt asks for (feedback and remaining_issues) names what is left: one critic run per iteration; issues that are blank or not text name nothing', async () => {
      const fix = [{ write: { path: 'src/sum.js', content: 'exports.sum = (a, b) => a + b;\n' } }];
      const asPrompted = carryOn('Also handle strings of digits.', ['sum("2", "3") returns "23", not 5']);
      const againAsPrompted = carryOn('And negative zero.', ['sum(-0, 0) should be 0']);
      const blankIssues = decision({ type: 'continue', feedback: 'Not yet.', remaining_issues: ['', '   ', 7, null, { issue: 'x' }] });
      const script = { actor: [fix, [], [], []], critic: [[asPrompted], [againAsPrompted], [blankIssues], [done('It adds.')]] };
      const run = await runOnProject(script, ['-n', '4']);
      assert.equal(run.outcome.status, 'success', run.result.stderr);
      assert.equal(run.lines.length - 2, 3, 'three iterations');
      assert.equal(run.agent.calls('critic'), 4, 'one run for each CONTINUE as prompted; the one naming nothing asked once more');
      assert.deepEqual(
        run.lines.slice(1, 3).map((line) => (line as Record<string, unknown>).remaining_issues),
        [['sum("2", "3") returns "23", not 5'], ['sum(-0, 0) should be 0']],
      );
      assert.match(run.agent.prompt('actor', 2), /## Remaining issues\n- sum\("2", "3"\) returns "23", not 5/);
      for (const call of [2, 3]) assert.match(run.agent.prompt('critic', call), new RegExp(`^You are the critic[^\n]*finished iteration ${call} `));
      const request = run.agent.prompt('critic', 4);
      assert.ok(request.startsWith(run.agent.prompt('critic', 3)), 'the request to be specific repeats the whole review');
      assert.match(request, /## Asked again[\s\S]*names nothing concrete/);
      assert.equal(run.result.stderr.match(/named nothing concrete; asking it once to be specific/g)?.length, 1, run.result.stderr);
      assert.match(run.result.stderr, /iteration 3: the critic asked for more work but named nothing concrete/);
    });
  });

  describe('what each DONE rests on', () => {
    const PRODUCT_TASK = 'Add a product function to src/sum.js.';

    it('an actor that claims done without changing anything: not success by default; success with --no-verify (the checks pass)', async () => {
      const script = { actor: [[{ print: 'Done: product is already there.' } as ScriptStep]], critic: believingCritic };
      const verified = await runOnProject(script, ['-n', '2'], { sumWorks: true, task: PRODUCT_TASK });
      assert.equal(verified.outcome.status, 'max_iterations_reached', verified.result.stderr);
      const refusal = verified.events.find((event) => event.type === 'done_refused') as { unverified?: string } | undefined;
      assert.equal(refusal?.unverified, 'no_change');
      assert.match(verified.result.stderr, /DONE refused: nothing changed since the loop started/);
      assert.match(String((verified.lines[1] as Record<string, unknown>).feedback), /Nothing has changed since the loop started/);
      const plain = await runOnProject(script, ['-n', '2', '--no-verify'], { sumWorks: true, task: PRODUCT_TASK });
      assert.equal(plain.outcome.status, 'success', plain.result.stderr);
    });

    it('a DONE on an unchanged tree stands when the critic says no_change_needed and a check shows it', async () => {
      const critic = [[{ print: '<decision>{"type":"done","summary":"sum already adds","no_change_needed":true}</decision>' } as ScriptStep]];
      const { outcome, result } = await runOnProject({ actor: [[{ print: 'nothing to do' } as ScriptStep]], critic }, ['-n', '2'], {
        sumWorks: true,
        task: 'Make sure sum adds.',
      });
      assert.equal(outcome.status, 'success', result.stderr);
      assert.equal(outcome.verification, 'verified', 'the tests check passed on the final tree');
    });

    it('verification: a DONE behind a passing required check is verified; without checks it is unverified, said in --json-output, session_end, the run output and sessions list', async () => {
      const fix = [{ write: { path: 'src/sum.js', content: 'exports.sum = (a, b) => a + b;\n' } }];
      const checked = await runOnProject({ actor: [fix], critic: believingCritic }, ['-n', '2']);
      assert.equal(checked.outcome.status, 'success', checked.result.stderr);
      assert.equal(checked.outcome.verification, 'verified');
      assert.equal((checked.lines.at(-1) as Record<string, unknown>).verification, 'verified');

      const unchecked = await runOnProject({ actor: [fix], critic: believingCritic }, ['-n', '2', '--no-checks']);
      assert.equal(unchecked.outcome.status, 'success', unchecked.result.stderr);
      assert.equal(unchecked.outcome.verification, 'unverified');
      assert.equal((unchecked.lines.at(-1) as Record<string, unknown>).verification, 'unverified');
      assert.match(unchecked.result.stderr, /Done after 1 iteration .*unverified/);
      const listed = await runCli(['sessions', 'list'], { cwd: unchecked.repo, env: unchecked.home.env });
      assert.match(listed.stdout, /success \(unverified\)/);
      const json = JSON.parse((await runCli(['sessions', 'list', '--json'], { cwd: unchecked.repo, env: unchecked.home.env })).stdout) as {
        verification: string;
      }[];
      assert.deepEqual(
        json.map((summary) => summary.verification),
        ['unverified'],
      );
    });

    it('--require-evidence refuses a DONE that nothing verified', async () => {
      const fix = [{ write: { path: 'src/sum.js', content: 'exports.sum = (a, b) => a + b;\n' } }];
      const { outcome, events, result } = await runOnProject({ actor: [fix], critic: believingCritic }, ['-n', '2', '--no-checks', '--require-evidence']);
      assert.equal(outcome.status, 'max_iterations_reached', result.stderr);
      assert.deepEqual(
        events.filter((event) => event.type === 'done_refused').map((event) => (event as { unverified?: string }).unverified),
        ['no_evidence', 'no_evidence'],
      );
    });
  });
});

describe("DONE judged by effect: the start's tests on the final code (the built CLI, the same npm project, `npm test` read test by test)", () => {
  afterEach(stopRunners);
  after(removeTempDirs);
  const byTests = { config: CONFIG_BY_TESTS };
  type Oracle = { findings: { id: string; kind: string }[]; accepted: { finding: { id: string }; by: string }[]; passed: number; baseline: number };

  for (const mistake of MISTAKES.filter((each) => each.passesPlainGate)) {
    it(`an actor that ${mistake.name}: refused because the start's test still fails on the final code; the pattern is a hint`, async () => {
      const verified = await runOnProject({ actor: [mistake.actor], critic: believingCritic }, ['-n', '2'], byTests);
      assert.equal(verified.outcome.status, 'max_iterations_reached', verified.result.stderr);
      const baseline = verified.events.find((event) => event.type === 'test_baseline') as { checks: { passing: string[]; failing: string[] }[] };
      assert.deepEqual([baseline.checks[0]!.passing, baseline.checks[0]!.failing], [['adds zero'], ['adds two numbers']]);
      if (mistake.kind === 'test_file_deleted') {
        // With no test file left, the check itself fails: its runner ran no test.
        assert.match(verified.result.stderr, /node ran no test: the check fails/);
        return;
      }
      const oracle = verified.events.find((event) => event.type === 'test_oracle') as Oracle;
      assert.deepEqual(
        oracle.findings.map((finding) => [finding.id, finding.kind]),
        [['adds two numbers', 'test_failing']],
      );
      const refusal = verified.events.find((event) => event.type === 'done_refused') as { failed_tests?: string[] };
      assert.deepEqual(refusal.failed_tests, ['adds two numbers']);
      const accept = `codeloops accept ${verified.outcome.session_id} --test 'adds two numbers' --reason`;
      assert.ok(verified.result.stderr.includes(accept), `the run that ends refused says how to accept the test:\n${verified.result.stderr}`);
      const change = verified.events.find((event) => event.type === 'protected_change') as { change: { kind: string }; status: string };
      assert.deepEqual([change.change.kind, change.status], [mistake.kind, 'hint']);
      assert.match(verified.agent.prompt('actor', 2), /adds two numbers still fails[\s\S]*Make the code pass them/);
      assert.match(verified.result.stderr, /the start's tests on the final code: 1 of 2 pass/);
    });
  }

  for (const weakening of BESIDE_A_FIX.filter((each) => each.kind !== 'nested_repository')) {
    it(`an actor that fixes sum and ${weakening.name}: success, the start's tests pass on the final code (the pattern only a hint)`, async () => {
      const run = await runOnProject({ actor: [weakening.actor], critic: believingCritic }, ['-n', '2'], { ...byTests, files: weakening.files });
      assert.equal(run.outcome.status, 'success', run.result.stderr);
      const outcome = run.outcome as unknown as { verification: string; verified_by: { start_tests: { passed: number } | null } };
      assert.deepEqual([outcome.verification, outcome.verified_by.start_tests?.passed], ['verified', 2]);
      const statuses = run.events.filter((event) => event.type === 'protected_change').map((event) => (event as { status: string }).status);
      assert.deepEqual(statuses, ['hint']);
    });
  }

  it('a test file renamed with its content is no weakening: success, verified by the start’s 2 tests', async () => {
    const renamed = [FIX_SUM, { delete: 'test/sum.test.js' }, { write: { path: 'test/adding.test.js', content: SUM_TESTS } }];
    const run = await runOnProject({ actor: [renamed], critic: believingCritic }, ['-n', '1'], byTests);
    assert.equal(run.outcome.status, 'success', run.result.stderr);
    const last = run.lines.at(-1) as { verified_by: { start_tests: { passed: number }; exit_code_checks: string[] } };
    assert.deepEqual([last.verified_by.start_tests.passed, last.verified_by.exit_code_checks], [2, []]);
    assert.match(run.result.stderr, /the start's tests on the final code: 2 of 2 pass/);
  });

  it('the same start test refused twice asks you (needs_input from the gate); accept --test lets it fail; resume ends success', async () => {
    const skip = MISTAKES.find((mistake) => mistake.kind === 'skip_added')!;
    const run = await runOnProject({ actor: [skip.actor, [], []], critic: believingCritic }, ['-n', '3'], byTests);
    assert.equal(run.outcome.status, 'failed', run.result.stderr);
    const asked = run.events.find((event) => event.type === 'needs_input') as { from: string; question: string; iteration: number };
    assert.deepEqual([asked.from, asked.iteration], ['gate', 2]);
    assert.match(asked.question, /adds two numbers[\s\S]*codeloops accept <session> --test <id>/);
    const cli = (args: string[]) => runCli(args, { cwd: run.repo, env: run.home.env });

    const unknown = await cli(['accept', run.outcome.session_id, '--test', 'no such test']);
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.match(unknown.stderr, /no start test no such test[\s\S]*it has: adds two numbers/);
    const accepted = await cli(['accept', run.outcome.session_id, '--test', 'adds two numbers', '--reason', 'the task drops it', '--json']);
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.deepEqual(JSON.parse(accepted.stdout), {
      session_id: run.outcome.session_id,
      test: 'adds two numbers',
      result: 'accepted',
      reason: 'the task drops it',
    });
    const resumed = await cli(['resume', run.outcome.session_id, '--trust', '-n', '3', '--json-output']);
    const outcome = JSON.parse(resumed.stdout) as { status: string; session_id: string };
    assert.equal(outcome.status, 'success', resumed.stderr);
    const events = readJsonLines(path.join(sidecarDirOf(outcome.session_id, run.home.env), 'events.jsonl'));
    const oracle = events.find((event) => event.type === 'test_oracle') as Oracle;
    assert.deepEqual([oracle.findings, oracle.accepted.map((each) => [each.finding.id, each.by])], [[], [['adds two numbers', 'user']]]);
  });

  it("resume carries the start's tests as the task's first run found them: they are not run again on the same start tree", async () => {
    // Each run of the tests says where it ran: the oracle's worktree is under <worktrees>/oracle/<session>/.
    const runs = path.join(tempDir('codeloops-runs-'), 'runs');
    const counting = `require('node:fs').appendFileSync(${JSON.stringify(runs)}, process.cwd() + '\\n');\nrequire('node:test').test('counts', () => {});\n`;
    const critic = [[carryOn('Not yet.', ['sum still subtracts'])], [done('All tests pass.')]];
    const run = await runOnProject({ actor: [[FIX_SUM], []], critic }, ['-n', '1'], { ...byTests, files: { 'test/count.test.js': counting } });
    assert.equal(run.outcome.status, 'max_iterations_reached', run.result.stderr);
    const resumed = await runCli(['resume', run.outcome.session_id, '--trust', '-n', '2', '--json-output'], { cwd: run.repo, env: run.home.env });
    const outcome = JSON.parse(resumed.stdout) as { status: string; session_id: string };
    assert.equal(outcome.status, 'success', resumed.stderr);
    const events = readJsonLines(path.join(sidecarDirOf(outcome.session_id, run.home.env), 'events.jsonl'));
    const baselineOf = (list: Record<string, unknown>[]) => {
      const { timestamp: _, ...rest } = list.find((event) => event.type === 'test_baseline')!;
      return rest;
    };
    assert.deepEqual(baselineOf(events), baselineOf(run.events));
    const inOracle = fs
      .readFileSync(runs, 'utf8')
      .split('\n')
      .filter((where) => where.includes(`${path.sep}oracle${path.sep}`));
    assert.equal(inOracle.length, 2, `the baseline once, the oracle at DONE once:\n${inOracle.join('\n')}`);
  });

  it('--allow-test-changes accepts every start test that fails on the final code, and says so', async () => {
    const skip = MISTAKES.find((mistake) => mistake.kind === 'skip_added')!;
    const run = await runOnProject({ actor: [skip.actor], critic: believingCritic }, ['-n', '1', '--allow-test-changes'], byTests);
    assert.equal(run.outcome.status, 'success', run.result.stderr);
    const oracle = run.events.find((event) => event.type === 'test_oracle') as Oracle;
    assert.deepEqual(
      oracle.accepted.map((each) => [each.finding.id, each.by]),
      [['adds two numbers', 'allow_test_changes']],
    );
    assert.match(run.result.stderr, /adds two numbers still fails: accepted \(--allow-test-changes\)/);
  });
});
