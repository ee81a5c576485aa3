import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { MISSING_DEPENDENCIES_NOTE } from '../../src/checks/checkReport.js';
import type { CheckSpec } from '../../src/checks/runCheck.js';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';
import { carryOn, done } from '../support/scriptedAgent.js';
import { readJsonLines, runScriptedLoop } from '../support/scriptedLoop.js';
import { mkfifo } from '../support/hostileFiles.js';
import { stopRunners } from '../support/processes.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo, git, removeTempDirs, tempDir } from '../support/testEnvironment.js';

const check = (name: string, run: string, fields: Partial<CheckSpec> = {}): CheckSpec => ({ name, run, timeoutSecs: 60, required: true, ...fields });

function eventsOf<T extends RunEvent['type']>(events: RunEvent[], type: T): Extract<RunEvent, { type: T }>[] {
  return events.filter((event): event is Extract<RunEvent, { type: T }> => event.type === type);
}

/** Which checks ran in which iteration, in order. */
function checkRuns(events: RunEvent[]): [number, string, boolean][] {
  return eventsOf(events, 'check_finished').map((result) => [result.iteration, result.name, result.passed]);
}

/** Every prompt a role was given in the run. */
function promptsOf(
  agent: { prompt(role: 'actor' | 'critic', call: number): string; calls(role: 'actor' | 'critic'): number },
  role: 'actor' | 'critic',
): string[] {
  return Array.from({ length: agent.calls(role) }, (_, index) => agent.prompt(role, index + 1));
}

/** The user's git state: HEAD, its branch, every branch, the index's bytes, and the worktrees git knows. */
function userGitState(repo: string) {
  return {
    head: git(repo, 'rev-parse', 'HEAD'),
    branch: git(repo, 'symbolic-ref', 'HEAD'),
    branches: git(repo, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads'),
    index: fs.readFileSync(path.join(repo, '.git', 'index')).toString('base64'),
    worktrees: git(repo, 'worktree', 'list', '--porcelain'),
  };
}

describe('checks at DONE, acceptance checks hidden from the agents, isolated checks', () => {
  afterEach(stopRunners);
  after(removeTempDirs);

  it('runs a `done` check only on a DONE the `each` checks let through, and its failure refuses that DONE', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const unit = check('unit', 'test -f unit.txt || { echo "unit: unit.txt is missing"; exit 1; }');
    const e2e = check('e2e', 'test -f e2e.txt || { echo "E2E: the page does not load"; exit 1; }', { when: 'done' });
    const { summary, events, agent } = await runScriptedLoop(
      repo,
      {
        actor: [
          [{ write: { path: 'notes.txt', content: '1\n' } }],
          [{ write: { path: 'notes.txt', content: '2\n' } }],
          [{ write: { path: 'unit.txt', content: 'ok\n' } }],
          [{ write: { path: 'e2e.txt', content: 'ok\n' } }],
        ],
        critic: [[carryOn('Keep going with the notes')], [done()]],
      },
      { checks: [unit, e2e], maxIterations: 6 },
    );
    assert.equal(summary.status, 'success');
    assert.equal(summary.iterations, 4);
    assert.deepEqual(checkRuns(events), [
      [1, 'unit', false], // CONTINUE: the e2e check waits for a DONE
      [2, 'unit', false], // DONE, but a required `each` check fails: no e2e run
      [3, 'unit', true],
      [3, 'e2e', false], // DONE with unit passing: e2e runs, fails, refuses it
      [4, 'unit', true],
      [4, 'e2e', true],
    ]);
    const { lines } = assertValidSessionFile(summary.session_file);
    const third = lines[3] as Record<string, unknown>;
    assert.equal(third.critic_decision, 'CONTINUE', 'the DONE the e2e check refused');
    assert.equal(third.critic_verdict, 'DONE');
    assert.deepEqual(third.failed_checks, ['e2e']);
    assert.match(third.feedback as string, /E2E: the page does not load/);
    assert.deepEqual(
      eventsOf(events, 'done_refused').map((refusal) => [refusal.iteration, refusal.failed_checks]),
      [
        [2, ['unit']],
        [3, ['e2e']],
      ],
    );
    // The next actor is told, as of any required check; the e2e check ran after the critic, so no critic saw it.
    assert.match(agent.prompt('actor', 4), /e2e[\s\S]*E2E: the page does not load/);
    assert.doesNotMatch(agent.prompt('critic', 3), /E2E/);
    const started = eventsOf(events, 'run_started')[0]!;
    assert.deepEqual(
      started.guards?.checks.map((recorded) => [recorded.name, recorded.when, recorded.hidden, recorded.isolated]),
      [
        ['unit', 'each', false, false],
        ['e2e', 'done', false, false],
      ],
    );
  });

  it("never puts an acceptance check's command, output or the file it names in a prompt, the session or the actor's environment; the sidecar keeps them", async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const secrets = tempDir('codeloops-acceptance-');
    const spec = path.join(secrets, 'holdout_answer_spec.sh');
    fs.writeFileSync(spec, 'grep -qx 42 answer.txt || { echo "DEEP-SECRET: expected 42, got $(cat answer.txt)"; exit 1; }\n');
    const quickSpec = path.join(secrets, 'holdout_quick_spec.sh');
    fs.writeFileSync(quickSpec, 'echo "QUICK-SECRET: looking at answer.txt"; test -f answer.txt\n');
    const envDump = path.join(tempDir(), 'actor-env.txt');
    const dumpEnv = { shell: ['sh', '-c', `env >> ${JSON.stringify(envDump)}`] };
    const { summary, events, agent, sidecarDir } = await runScriptedLoop(
      repo,
      {
        actor: [
          [dumpEnv, { write: { path: 'notes.txt', content: 'thinking\n' } }],
          [dumpEnv, { write: { path: 'answer.txt', content: '41\n' } }],
          [dumpEnv, { write: { path: 'answer.txt', content: '42\n' } }],
        ],
        critic: [[carryOn('Write the answer')], [done()]],
      },
      {
        checks: [
          check('acceptance', `sh ${JSON.stringify(spec)}`, { hidden: true }), // at DONE, as a hidden check is by default
          check('acceptance-quick', `sh ${JSON.stringify(quickSpec)}`, { hidden: true, when: 'each' }),
        ],
      },
    );
    assert.equal(summary.status, 'success');
    assert.deepEqual(checkRuns(events), [
      [1, 'acceptance-quick', false],
      [2, 'acceptance-quick', true],
      [2, 'acceptance', false],
      [3, 'acceptance-quick', true],
      [3, 'acceptance', true],
    ]);
    const secretWords = [secrets, 'holdout_answer_spec', 'holdout_quick_spec', 'DEEP-SECRET', 'QUICK-SECRET', 'expected 42'];
    const prompts = [...promptsOf(agent, 'actor'), ...promptsOf(agent, 'critic')];
    assert.equal(prompts.length, 6);
    for (const prompt of prompts) for (const secret of secretWords) assert.ok(!prompt.includes(secret), `a prompt holds "${secret}":\n${prompt}`);
    // What they learn: the check's name, that it is an acceptance check, that it failed.
    assert.match(agent.prompt('critic', 1), /acceptance-quick \(an acceptance check[^)]*\): failed/);
    assert.match(agent.prompt('actor', 3), /The acceptance check acceptance fails/);
    assert.match(agent.prompt('actor', 3), /acceptance \(an acceptance check[^)]*\): failed/);
    // The session file (the feedback a resumed actor is told) and the actor's environment hold none of it either.
    const sessionText = fs.readFileSync(summary.session_file, 'utf8');
    for (const secret of secretWords) assert.ok(!sessionText.includes(secret), `the session file holds "${secret}"`);
    const actorEnv = fs.readFileSync(envDump, 'utf8');
    assert.match(actorEnv, /CODELOOPS_SESSION_ID=/);
    for (const secret of secretWords) assert.ok(!actorEnv.includes(secret), `the actor's environment holds "${secret}"`);
    // The user sees everything: the sidecar keeps the command and the output.
    const recorded = readJsonLines(path.join(sidecarDir, 'events.jsonl'));
    const refused = recorded.find((event) => event.type === 'check_finished' && event.name === 'acceptance' && event.passed === false)!;
    assert.equal(refused.command, `sh ${JSON.stringify(spec)}`);
    assert.match(refused.output as string, /DEEP-SECRET: expected 42, got 41/);
    assert.equal(refused.hidden, true);
    assert.equal(refused.when, 'done');
  });

  it("an acceptance check whose script is in the repository: the actor's change to it is never named to the agents as what a check runs", async () => {
    const spec = 'holdout/answer_spec.sh';
    const specText = 'grep -qx 42 answer.txt || { echo "expected 42"; exit 1; }\n';
    const repo = createRepo({ files: { 'package.json': '{"name":"demo"}\n', 'test/a.test.js': "test('a', () => {});\n", [spec]: specText } });
    const { summary, events, agent } = await runScriptedLoop(
      repo,
      {
        actor: [
          [{ write: { path: 'answer.txt', content: '41\n' } }, { write: { path: spec, content: `# tidied\n${specText}` } }],
          [{ write: { path: 'answer.txt', content: '42\n' } }],
        ],
        critic: [[done()]],
      },
      { checks: [check('acceptance', `sh ${spec}`, { hidden: true })], verify: { protected: [], allowTestChanges: false, requireEvidence: false } },
    );
    assert.equal(summary.status, 'success');
    assert.deepEqual(checkRuns(events), [
      [1, 'acceptance', false],
      [2, 'acceptance', true],
    ]);
    assert.deepEqual(eventsOf(events, 'protected_change'), [], 'not judged as what a check runs: that would name it');
    const prompts = [...promptsOf(agent, 'actor'), ...promptsOf(agent, 'critic')];
    assert.equal(prompts.length, 4);
    // The diff shows the actor its own edit; nothing says that a check runs the file, or which.
    for (const prompt of prompts)
      assert.doesNotMatch(prompt, /acceptance check runs it|Changes to what the checks rest on|What the checks rest on, weakened/, prompt);
  });

  it('runs an isolated check in a clean worktree of the snapshot, without the ignored build output the actor left, and removes it', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n', '.gitignore': 'build/\n.env\n' } });
    fs.writeFileSync(path.join(repo, '.env'), 'TOKEN=1\n');
    const before = userGitState(repo);
    const worktreesDirectory = tempDir('codeloops-worktrees-');
    const built = check(
      'built',
      'pwd; test -f src.txt || { echo "NO SOURCE"; exit 2; }; test -f .env || { echo "NO ENV"; exit 3; }; ' +
        'test -f build/out.txt || { echo "NO BUILD OUTPUT"; exit 1; }',
      { isolated: true },
    );
    const { summary, events } = await runScriptedLoop(
      repo,
      {
        actor: [
          [{ write: { path: 'src.txt', content: 'source\n' } }, { write: { path: 'build/out.txt', content: 'stale output that makes the check pass\n' } }],
        ],
        critic: [[done()]],
      },
      { checks: [built], maxIterations: 1, isolation: { directory: worktreesDirectory, worktree: { copy: ['.env'], setup: null, setupTimeoutSecs: 60 } } },
    );
    const [result] = eventsOf(events, 'check_finished');
    assert.equal(result?.exit_code, 1, result?.output);
    assert.match(result!.output, /NO BUILD OUTPUT/);
    assert.ok(result!.output.startsWith(path.join(fs.realpathSync(worktreesDirectory), 'checks')), `ran in ${result!.output}`);
    assert.equal(result?.isolated, true);
    assert.equal(summary.status, 'max_iterations_reached', 'the DONE was refused');
    // The user's files, HEAD, branch, index and worktrees are as they were; no worktree is left behind.
    assert.equal(fs.readFileSync(path.join(repo, 'build', 'out.txt'), 'utf8'), 'stale output that makes the check pass\n');
    assert.deepEqual(userGitState(repo), before);
    assert.deepEqual(fs.readdirSync(worktreesDirectory), []);
  });

  it("says a command not found in an isolated check's worktree is its missing dependencies, the agents by the check's name alone; [worktree] copy clones them in", async () => {
    // The user's tools, installed where git does not look: a worktree of a snapshot has none of them.
    const repo = createRepo({ files: { 'README.md': '# demo\n', '.gitignore': 'tools/\n' } });
    fs.mkdirSync(path.join(repo, 'tools', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'tools', 'bin', 'lint'), '#!/bin/sh\necho "lint ok, inode $(stat -c %i tools/bin/lint)"\n', { mode: 0o755 });
    fs.symlinkSync('bin/lint', path.join(repo, 'tools', 'lint-link'));
    const acceptance = check('acceptance', 'tools/lint-link', { isolated: true, hidden: true, when: 'each' });
    // Not found in the user's own tree: that is no worktree's fault, and says nothing of one.
    const ownTree = check('own-tree', 'no-such-program-for-codeloops', { required: false });
    const isolation = (copy: string[]) => ({ directory: tempDir('codeloops-worktrees-'), worktree: { copy, setup: null, setupTimeoutSecs: 60 } });
    const script = { actor: [[{ write: { path: 'a.txt', content: 'a\n' } }]], critic: [[done()]] };

    const missing = await runScriptedLoop(repo, script, { checks: [acceptance, ownTree], maxIterations: 1, isolation: isolation([]) });
    const [hidden, own] = eventsOf(missing.events, 'check_finished');
    assert.deepEqual([hidden?.exit_code, own?.exit_code], [127, 127]);
    assert.ok(hidden!.output.endsWith(`\n${MISSING_DEPENDENCIES_NOTE}`), hidden!.output);
    assert.ok(!own!.output.includes(MISSING_DEPENDENCIES_NOTE), own!.output);
    const criticPrompt = missing.agent.prompt('critic', 1);
    assert.match(
      criticPrompt,
      /acceptance \(an acceptance check: its command and output are not shown\): failed; it could not run: a command was not found in its worktree/,
    );
    assert.ok(!criticPrompt.includes('tools/') && !criticPrompt.includes(MISSING_DEPENDENCIES_NOTE), criticPrompt);

    const copied = await runScriptedLoop(repo, script, { checks: [acceptance], maxIterations: 1, isolation: isolation(['tools']) });
    const [passed] = eventsOf(copied.events, 'check_finished');
    assert.equal(passed?.passed, true, passed?.output);
    // A copy of its own, never a hard link to the user's file, which the worktree could then change.
    const inode = /inode (\d+)/.exec(passed!.output)?.[1];
    assert.ok(inode !== undefined && Number(inode) !== fs.statSync(path.join(repo, 'tools', 'bin', 'lint')).ino, passed!.output);
    assert.equal(copied.summary.status, 'success');
  });

  it('removes the worktree of an isolated check interrupted while it runs', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const before = userGitState(repo);
    const worktreesDirectory = tempDir('codeloops-worktrees-');
    const fifo = mkfifo(path.join(tempDir(), 'check-started'));
    const controller = new AbortController();
    // The check says it started through the pipe; the test interrupts the loop the moment it reads that.
    const started = new Promise<void>((resolve, reject) => {
      const reader = fs.createReadStream(fifo);
      reader.on('data', () => {
        resolve();
        reader.destroy();
      });
      reader.on('error', reject);
    });
    void started.then(() => controller.abort());
    const { summary } = await runScriptedLoop(
      repo,
      { actor: [[{ write: { path: 'a.txt', content: 'a\n' } }]], critic: [[done()]] },
      {
        checks: [check('slow', `echo started > ${JSON.stringify(fifo)}; sleep 600`, { isolated: true, when: 'each' })],
        signal: controller.signal,
        isolation: { directory: worktreesDirectory, worktree: { copy: [], setup: null, setupTimeoutSecs: 60 } },
      },
    );
    assert.equal(summary.status, 'interrupted');
    assert.deepEqual(fs.readdirSync(worktreesDirectory), []);
    assert.deepEqual(userGitState(repo), before);
  });
});
