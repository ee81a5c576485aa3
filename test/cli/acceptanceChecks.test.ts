import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../support/cliProcess.js';
import { stopRunners } from '../support/processes.js';
import { done, scriptedCliSetup } from '../support/scriptedAgent.js';
import { removeTempDirs, tempDir, writeFile } from '../support/testEnvironment.js';

/** A hidden acceptance check in the global config, outside the repository, beside the project's own checks. */
function acceptanceSetup() {
  const secrets = tempDir('codeloops-acceptance-');
  const spec = path.join(secrets, 'holdout_answer_spec.sh');
  fs.writeFileSync(spec, 'grep -qx 42 answer.txt || { echo "DEEP-SECRET: expected 42, got $(cat answer.txt)"; exit 1; }\n');
  const command = `sh ${spec}`;
  const setup = scriptedCliSetup(
    {
      actor: [[{ write: { path: 'answer.txt', content: '41\n' } }], [{ write: { path: 'answer.txt', content: '42\n' } }]],
      critic: [[done('The answer is written')]],
    },
    `\n[[defaults.checks]]\nname = "acceptance"\nrun = ${JSON.stringify(command)}\nhidden = true\n`,
  );
  // The project's file names its own check, in a clean worktree; the acceptance check is not in it.
  writeFile(setup.repo, 'codeloops.toml', '[[checks]]\nname = "tests"\nrun = "test -f README.md"\nisolated = true\n');
  return { ...setup, command, secrets };
}

describe('acceptance checks, checks at DONE and isolated checks (the built CLI)', () => {
  afterEach(stopRunners);
  after(removeTempDirs);

  it("shows the user a hidden check's command and output (plan, live output, replay) while the agents learn only its name", async () => {
    const { repo, env, agent, command, secrets } = acceptanceSetup();

    // Trust shows how the project's checks run; the global config's acceptance check needs no trust.
    const untrusted = await runCli(['-p', 'write the answer', '--dry-run'], { cwd: repo, env });
    assert.equal(untrusted.code, 2, untrusted.stderr);
    assert.match(untrusted.stderr, /\[\[checks\]\] tests: sh -c "test -f README\.md" \(in [^)]*\) \[in a clean worktree of the iteration's snapshot/);

    const plan = await runCli(['-p', 'write the answer', '--dry-run', '--trust'], { cwd: repo, env });
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout + plan.stderr, /tests \(required, in a clean worktree\): test -f README\.md/);
    assert.ok(
      (plan.stdout + plan.stderr).includes(`acceptance (required, at DONE only, hidden from the agents, in a clean worktree): ${command}`),
      plan.stdout + plan.stderr,
    );
    const planJson = await runCli(['-p', 'write the answer', '--dry-run', '--trust', '--json-output'], { cwd: repo, env });
    const planned = (JSON.parse(planJson.stdout) as { checks: Record<string, unknown>[] }).checks;
    assert.deepEqual(
      planned.map((check) => [check.name, check.when, check.hidden, check.isolated]),
      [
        ['tests', 'each', false, true],
        ['acceptance', 'done', true, true],
      ],
    );

    const run = await runCli(['-p', 'write the answer', '--trust', '--json-output'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    assert.equal((JSON.parse(run.stdout) as { iterations: number }).iterations, 2, 'the first DONE was refused');
    assert.match(run.stderr, /check acceptance \(acceptance: hidden from the agents, at DONE, in a clean worktree\): failed \(exit 1\)/);
    assert.match(run.stderr, /DEEP-SECRET: expected 42, got 41/);
    assert.match(run.stderr, /check tests \(in a clean worktree\): passed/);
    for (const prompt of [agent.prompt('actor', 2), agent.prompt('critic', 1), agent.prompt('critic', 2)]) {
      for (const secret of [secrets, 'holdout_answer_spec', 'DEEP-SECRET']) assert.ok(!prompt.includes(secret), `a prompt holds "${secret}":\n${prompt}`);
    }
    assert.match(agent.prompt('actor', 2), /The acceptance check acceptance fails/);

    const replayed = await runCli(['sessions', 'replay', 'latest', '--json'], { cwd: repo, env });
    assert.equal(replayed.code, 0, replayed.stderr);
    const checks = replayed.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.kind === 'check' && entry.name === 'acceptance');
    assert.deepEqual(
      checks.map((entry) => [entry.iteration, entry.command, entry.passed, entry.hidden, entry.when]),
      [
        [1, command, false, true, 'done'],
        [2, command, true, true, 'done'],
      ],
    );
    assert.match(String(checks[0]!.output), /DEEP-SECRET: expected 42, got 41/);
    // The replay in words is the user's too: the check's command, and what it printed when it failed.
    const words = await runCli(['sessions', 'replay', 'latest'], { cwd: repo, env });
    assert.equal(words.code, 0, words.stderr);
    const failedLine = words.stdout
      .split('\n')
      .findIndex((line) => /check acceptance \(acceptance: hidden from the agents, at DONE, in a clean worktree\): failed/.test(line));
    assert.ok(failedLine >= 0, words.stdout);
    assert.ok(words.stdout.split('\n')[failedLine]!.includes(`$ ${command}`), words.stdout);
    assert.ok(words.stdout.split('\n')[failedLine]!.includes('DEEP-SECRET: expected 42, got 41'), words.stdout);
  });

  it('keeps an acceptance check hidden and at DONE when a session is resumed, from what the session recorded', async () => {
    const { repo, env, agent, command, secrets, home } = acceptanceSetup();
    const first = await runCli(['-p', 'write the answer', '-n', '1', '--trust', '--json-output'], { cwd: repo, env });
    assert.equal(JSON.parse(first.stdout).status, 'max_iterations_reached', first.stderr);
    // The check is gone from the global config: the resumed run knows it only from the session's record.
    const configFile = path.join(home.configHome, 'codeloops', 'config.toml');
    fs.writeFileSync(configFile, fs.readFileSync(configFile, 'utf8').split('\n[[defaults.checks]]')[0]!);
    const resumed = await runCli(['resume', 'latest', '-n', '2', '--trust', '--json-output'], { cwd: repo, env });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /check acceptance \(acceptance: hidden from the agents, at DONE, in a clean worktree\): passed/);
    for (const prompt of [agent.prompt('actor', 2), agent.prompt('critic', 2)]) {
      for (const secret of [secrets, command, 'DEEP-SECRET']) assert.ok(!prompt.includes(secret), `a prompt holds "${secret}":\n${prompt}`);
    }
  });

  it('refuses a check whose `when` is neither "each" nor "done" with config_invalid, naming the key', async () => {
    const { repo, env } = scriptedCliSetup({ actor: [[{ print: 'hm' }]], critic: [[done()]] });
    writeFile(repo, 'codeloops.toml', '[[checks]]\nname = "tests"\nrun = "true"\nwhen = "sometimes"\n');
    const result = await runCli(['-p', 'x', '--dry-run', '--json-output'], { cwd: repo, env });
    assert.equal(result.code, 2, result.stderr);
    const output = JSON.parse(result.stdout) as { error_code: string; error: string };
    assert.equal(output.error_code, 'config_invalid');
    assert.match(output.error, /"checks\.0\.when": Invalid option: expected one of "each"\|"done"/);
  });
});
