import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runEventSchema, type RunEvent } from '../../src/sessionFormat/runEvents.js';
import { sidecarDirOf } from '../../src/sessionFormat/sessionFiles.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { runCli, startCli, type CliResult } from '../support/cliProcess.js';
import { carryOnNaming, decision, done, scriptedCliSetup, type AgentScript, type ScriptedAgent } from '../support/scriptedAgent.js';
import { readJsonLines } from '../support/scriptedLoop.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { git, removeTempDirs, tempDir, treeOf, twoProgramsOfOneName, writeFile } from '../support/testEnvironment.js';
import { stopRunners, waitUntilGone } from '../support/processes.js';

/** Waits until the scripted role has been started this many times (the agent itself counts its calls). */
async function untilCalled(agent: ScriptedAgent, role: 'actor' | 'critic', calls: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (agent.calls(role) < calls) {
    if (Date.now() > deadline) throw new Error(`the ${role} was never started ${calls} times`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function sessionFiles(sessionsDir: string): string[] {
  return fs.existsSync(sessionsDir)
    ? fs
        .readdirSync(sessionsDir)
        .sort()
        .map((name) => path.join(sessionsDir, name))
    : [];
}

/** Every iteration line of the files, in file order, as [file index, iteration number]. */
function iterationNumbers(files: readonly string[]): number[] {
  return files.flatMap((file) =>
    readJsonLines(file)
      .filter((line) => line.type === 'iteration')
      .map((line) => line.iteration_number as number),
  );
}

/**
 * Each actor call writes the same file (so any order of kills and resumes ends in
 * the same tree) and takes a moment, so that kills land while it works; the first
 * review asks for more, every later one is satisfied.
 */
const TWO_ITERATIONS: AgentScript = {
  actor: [[{ print: 'working' }, { sleep: 300 }, { write: { path: 'work.txt', content: 'done\n' } }, { print: 'wrote work.txt' }]],
  critic: [[{ sleep: 150 }, carryOnNaming('check it again')], [done('work.txt is written', 0.9)]],
};

/** Points of a loop's life, as seen in its event stream, at which the runner is killed. */
const KILL_POINTS: Array<{ name: string; at: (event: RunEvent) => boolean }> = [
  { name: 'just started', at: (event) => event.type === 'run_started' },
  { name: 'after the first pre snapshot', at: (event) => event.type === 'snapshot' && event.iteration === 1 && event.label === 'pre' },
  { name: 'while the actor works', at: (event) => event.type === 'agent_event' && event.iteration === 1 && event.role === 'actor' },
  { name: 'right after the actor', at: (event) => event.type === 'agent_finished' && event.role === 'actor' && event.iteration === 1 },
  { name: 'after the post snapshot', at: (event) => event.type === 'snapshot' && event.iteration === 1 && event.label === 'post' },
  { name: 'after the diff', at: (event) => event.type === 'diff_captured' && event.iteration === 1 },
  {
    name: 'while the critic reviews',
    at: (event) => event.type === 'phase' && event.phase === 'critic' && event.status === 'started' && event.iteration === 1,
  },
  { name: 'after the verdict', at: (event) => event.type === 'critic_decision' && event.iteration === 1 },
  { name: 'after the first iteration', at: (event) => event.type === 'iteration_finished' && event.iteration === 1 },
  { name: 'as the second iteration starts', at: (event) => event.type === 'iteration_started' && event.iteration === 2 },
  { name: 'while the second actor works', at: (event) => event.type === 'agent_event' && event.iteration === 2 && event.role === 'actor' },
  { name: 'as the run finishes', at: (event) => event.type === 'critic_decision' && event.iteration === 2 },
];

/** Runs the loop and SIGKILLs the runner at the first event matching the point. */
async function runAndKill(repo: string, env: Record<string, string>, at: (event: RunEvent) => boolean): Promise<CliResult> {
  const run = startCli(['-p', 'write work.txt', '--events', 'ndjson'], { cwd: repo, env });
  let buffered = '';
  run.child.stdout!.on('data', (chunk: string) => {
    buffered += chunk;
    let newline;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      const event = runEventSchema.parse(JSON.parse(line));
      if (at(event)) run.child.kill('SIGKILL');
    }
  });
  return run.done;
}

describe('codeloops resume (the built CLI)', function () {
  // A test that fails halfway leaves no runner or agent behind for the tests after it.
  afterEach(stopRunners);
  this.timeout(120_000);
  after(removeTempDirs);

  it('after SIGKILL at any point of a loop, every reader accepts the files and resume carries the session on to the end', async () => {
    const report: string[] = [];
    for (const point of KILL_POINTS) {
      const { repo, env, home } = scriptedCliSetup(TWO_ITERATIONS);
      const killed = await runAndKill(repo, env, point.at);
      if (killed.signal !== 'SIGKILL') {
        // The loop ended before the kill landed (the last point can race the end): nothing to resume then.
        assert.equal(killed.code, 0, `${point.name}: ${killed.stderr}`);
        report.push(`${point.name}: finished first`);
        continue;
      }
      // A killed runner's agent may still be finishing its step; let it, as a user would.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const [crashed] = sessionFiles(home.sessionsDir);
      assert.ok(crashed, `${point.name}: the session file exists`);
      assertValidSessionFile(crashed);
      const store = new SessionStore(home.sessionsDir);
      const listed = await store.list();
      assert.equal(listed.length, 1, point.name);
      if (point.name === 'as the run finishes' && listed[0]!.outcome === 'success') {
        // The kill landed after session_end was written, as the process exited: ended, nothing to resume.
        report.push(`${point.name}: ended as it was killed`);
        continue;
      }
      assert.equal(listed[0]!.outcome, null, `${point.name}: listed as not ended`);
      const loaded = await store.load(listed[0]!.id);
      assert.deepEqual(loaded.warnings, [], point.name);
      const show = await runCli(['sessions', 'show', 'latest', '--json'], { cwd: repo, env });
      assert.equal(show.code, 0, `${point.name}: sessions show reads it: ${show.stderr}`);

      let resumed = await runCli(['resume', 'latest', '--json-output'], { cwd: repo, env });
      let forced = false;
      if (resumed.code !== 0 && /differ from how the loop left them/.test(resumed.stderr)) {
        // Killed between an edit and its snapshot: resume says what differs and changes nothing.
        assert.match(resumed.stderr, /work\.txt/, point.name);
        assert.equal(JSON.parse(resumed.stdout).status, 'failed');
        forced = true;
        resumed = await runCli(['resume', 'latest', '--json-output', '--force'], { cwd: repo, env });
      }
      assert.equal(resumed.code, 0, `${point.name}: ${resumed.stderr}`);
      const outcome = JSON.parse(resumed.stdout) as { status: string; session_id: string; iterations: number };
      assert.equal(outcome.status, 'success', point.name);
      assert.equal(outcome.session_id, listed[0]!.id, `${point.name}: a session without session_end goes on in the same file`);
      const files = sessionFiles(home.sessionsDir);
      assert.equal(files.length, 1, point.name);
      assertValidSessionFile(files[0]!);
      const numbers = iterationNumbers(files);
      assert.deepEqual(
        numbers,
        numbers.map((_, index) => index + 1),
        `${point.name}: iterations carry on 1, 2, …`,
      );
      assert.equal(outcome.iterations, numbers.length, point.name);
      assert.deepEqual(treeOf(repo), { 'README.md': '# project\n', 'work.txt': 'done\n' }, point.name);
      report.push(`${point.name}: resumed${forced ? ' with --force' : ''} after ${loaded.iterations.length} recorded iteration(s)`);
    }
    // Most points must really have been a crash, or the test proves little.
    assert.ok(report.filter((line) => line.includes('resumed')).length >= KILL_POINTS.length - 1, report.join('\n'));
  });

  it('an interrupted session goes on in a new session linked by resumed_from, with the critic feedback and the numbering carried on', async () => {
    const { repo, env, home, agent } = scriptedCliSetup({
      actor: [[{ write: { path: 'a.txt', content: 'a\n' } }], [{ hang: true }], [{ write: { path: 'b.txt', content: 'b\n' } }]],
      critic: [[carryOnNaming('now write b.txt', ['b.txt is missing'])], [done('both files', 0.95)]],
    });
    const first = startCli(['-p', 'write a and b'], { cwd: repo, env });
    await untilCalled(agent, 'actor', 2);
    first.child.kill('SIGINT');
    const interrupted = await first.done;
    assert.equal(interrupted.code, 130, interrupted.stderr);

    const resumed = await runCli(['resume', 'latest', '--json-output'], { cwd: repo, env });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /Resuming session .* at iteration 2, in a new session linked to it/);
    const outcome = JSON.parse(resumed.stdout) as { status: string; session_id: string; iterations: number };
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.iterations, 2);
    const [older, newer] = sessionFiles(home.sessionsDir);
    assert.ok(older && newer);
    assertValidSessionFile(older);
    const { lines } = assertValidSessionFile(newer);
    assert.equal(lines[0]!.resumed_from, path.basename(older, '.jsonl'));
    assert.equal(lines[0]!.resumed_after_iteration, 1);
    assert.equal(lines[0]!.prompt, 'write a and b');
    assert.deepEqual(iterationNumbers([newer]), [2]);
    assert.equal(readJsonLines(older).at(-1)!.outcome, 'interrupted', 'the interrupted session is left as it was');
    // The resumed actor was told the last verdict and its remaining issues.
    const prompt = agent.prompt('actor', 3);
    assert.match(prompt, /iteration 2/);
    assert.match(prompt, /now write b\.txt/);
    assert.match(prompt, /b\.txt is missing/);
    assert.deepEqual(treeOf(repo), { 'README.md': '# project\n', 'a.txt': 'a\n', 'b.txt': 'b\n' });

    const again = await runCli(['resume', 'latest'], { cwd: repo, env });
    assert.equal(again.code, 2);
    assert.match(again.stderr, /already finished with success; there is nothing to resume/);
  });

  it('a checklist the critic listed goes on across resume: the resumed actor is shown it with each status, and DONE is refused until the third requirement has evidence', async () => {
    const requirement = (id: string, text: string, met: boolean, evidence: string) => ({ id, text, met, evidence });
    const [first, second, third] = [
      ['REQ1', 'a.txt holds a'],
      ['REQ2', 'b.txt holds b'],
      ['REQ3', 'c.txt holds c'],
    ] as const;
    const { repo, env, home, agent } = scriptedCliSetup({
      actor: [
        [{ write: { path: 'a.txt', content: 'a\n' } }, { write: { path: 'b.txt', content: 'b\n' } }],
        [{ hang: true }],
        [{ print: 'All three are there.' }],
        [{ write: { path: 'c.txt', content: 'c\n' } }],
      ],
      critic: [
        [
          decision({
            type: 'continue',
            feedback: 'Write c.txt.',
            remaining_issues: ['c.txt is missing'],
            requirements: [requirement(...first, true, 'a.txt:1'), requirement(...second, true, 'b.txt:1'), requirement(...third, false, 'c.txt is missing')],
          }),
        ],
        // A critic that forgets the list it gave: without it carried on, nothing would hold this DONE back.
        [
          decision({
            type: 'done',
            summary: 'a and b are there',
            requirements: [requirement(...first, true, 'a.txt:1'), requirement(...second, true, 'b.txt:1')],
          }),
        ],
        [
          decision({
            type: 'done',
            summary: 'all three files',
            requirements: [requirement(...first, true, 'a.txt:1'), requirement(...second, true, 'b.txt:1'), requirement(...third, true, 'c.txt:1')],
          }),
        ],
      ],
    });
    const run = startCli(['-p', 'write the files'], { cwd: repo, env });
    await untilCalled(agent, 'actor', 2);
    run.child.kill('SIGINT');
    assert.equal((await run.done).code, 130);

    const resumed = await runCli(['resume', 'latest', '--json-output'], { cwd: repo, env });
    assert.equal(resumed.code, 0, resumed.stderr);
    const outcome = JSON.parse(resumed.stdout) as { status: string; session_id: string };
    assert.equal(outcome.status, 'success');
    assert.match(
      agent.prompt('actor', 3),
      /## The task's requirements\n- \[x\] REQ1 a\.txt holds a — evidence: a\.txt:1\n- \[x\] REQ2 b\.txt holds b — evidence: b\.txt:1\n- \[ \] REQ3 c\.txt holds c — unmet: c\.txt is missing/,
    );
    const events = readJsonLines(path.join(sidecarDirOf(outcome.session_id, home.env), 'events.jsonl'));
    const refused = events.filter((event) => event.type === 'done_refused');
    assert.deepEqual(
      refused.map((event) => [event.iteration, event.unmet_requirements]),
      [[2, ['REQ3']]],
    );
    assert.match(agent.prompt('actor', 4), /- \[ \] REQ3 c\.txt holds c — not judged yet/);
    assert.equal(agent.calls('critic'), 3);
  });

  it('the time budget counts on across resume: resumed under the same budget it stops at once, and a raised one carries it on', async () => {
    const { repo, env, agent } = scriptedCliSetup({
      actor: [[{ write: { path: 'a.txt', content: 'a\n' } }, { print: 'working on it' }, { sleep: 600_000 }], [{ write: { path: 'b.txt', content: 'b\n' } }]],
      critic: [[done('both files', 0.9)]],
    });
    const first = await runCli(['-p', 'write a and b', '--max-duration', '1', '--json-output'], { cwd: repo, env });
    assert.equal(first.code, 2, first.stderr);
    const stopped = JSON.parse(first.stdout) as { stop_reason: string; total_duration_secs: number };
    assert.equal(stopped.stop_reason, 'duration');
    assert.ok(stopped.total_duration_secs >= 1);

    // The budget is taken over from the session, and the second it used counts: nothing is left to run.
    const again = await runCli(['resume', 'latest', '--json-output'], { cwd: repo, env });
    assert.equal(again.code, 2, again.stderr);
    const refused = JSON.parse(again.stdout) as { status: string; stop_reason: string; error: string; iterations: number };
    assert.equal(refused.status, 'failed');
    assert.equal(refused.stop_reason, 'duration');
    assert.match(refused.error, /whole time budget of 1 s \(counting the sessions it carries on\)/);
    assert.equal(agent.calls('actor'), 1, 'no actor ran again');
    assert.equal(fs.existsSync(path.join(repo, 'b.txt')), false);

    // A raised budget carries it on, from where it was.
    const raised = await runCli(['resume', 'latest', '--max-duration', '600', '--json-output'], { cwd: repo, env });
    assert.equal(raised.code, 0, raised.stderr);
    assert.equal((JSON.parse(raised.stdout) as { status: string }).status, 'success');
    assert.equal(agent.calls('actor'), 2);
    assert.equal(fs.readFileSync(path.join(repo, 'b.txt'), 'utf8'), 'b\n');
  });

  it("runs a project's checks in its codeloops.toml's folder again when a loop started in a subfolder is resumed", async () => {
    const { repo, env } = scriptedCliSetup({
      actor: [[{ write: { path: 'a.txt', content: 'a\n' } }], [{ write: { path: 'b.txt', content: 'b\n' } }]],
      critic: [[carryOnNaming('now b.txt')], [done('both')]],
    });
    writeFile(repo, 'codeloops.toml', '[[checks]]\nname = "tests"\nrun = "./where.sh"\n');
    twoProgramsOfOneName(repo, 'top');
    const first = await runCli(['-d', 'sub', '-p', 'write a and b', '-n', '1', '--trust'], { cwd: repo, env });
    assert.equal(first.code, 1, first.stderr);
    assert.match(first.stderr, /check tests: passed/);
    const resumed = await runCli(['resume', 'latest', '-n', '2', '--trust', '--json-output'], { cwd: repo, env });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /check tests: passed/);
    assert.equal(JSON.parse(resumed.stdout).status, 'success');
  });

  it('a ref lock file a crashed git left is git_locked, naming the file to remove; once it is gone, resume carries the session on', async () => {
    const { repo, env } = scriptedCliSetup(TWO_ITERATIONS);
    const killed = await runAndKill(repo, env, (event) => event.type === 'iteration_finished' && event.iteration === 1);
    assert.equal(killed.signal, 'SIGKILL');
    const sessionId = path.basename(sessionFiles(path.join(env.XDG_DATA_HOME!, 'codeloops', 'sessions'))[0]!, '.jsonl');
    // What git leaves when it is killed while it moves the session's head ref.
    const stale = path.join(repo, '.git', 'refs', 'codeloops', sessionId, 'head.lock');
    fs.writeFileSync(stale, '');
    const locked = await runCli(['resume', sessionId, '--json-output'], { cwd: repo, env });
    assert.equal(locked.code, 2, locked.stderr);
    const outcome = JSON.parse(locked.stdout) as { error_code: string; error: string };
    assert.equal(outcome.error_code, 'git_locked');
    assert.ok(outcome.error.includes(`${stale} exists`), outcome.error);
    fs.rmSync(stale);
    const resumed = await runCli(['resume', sessionId, '--json-output'], { cwd: repo, env });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(JSON.parse(resumed.stdout).status, 'success');
  });

  it("keeps a check's timeout_secs when the session is resumed, from what the session recorded", async () => {
    const { repo, env, home } = scriptedCliSetup(
      {
        actor: [[{ write: { path: 'a.txt', content: 'a\n' } }], [{ write: { path: 'b.txt', content: 'b\n' } }]],
        critic: [[carryOnNaming('now b.txt')], [done('both')]],
      },
      '\n[[defaults.checks]]\nname = "slow"\nrun = "sleep 5"\ntimeout_secs = 1\nrequired = false\n',
    );
    const first = await runCli(['-p', 'write a and b', '-n', '1'], { cwd: repo, env });
    assert.equal(first.code, 1, first.stderr);
    assert.match(first.stderr, /check slow: timed out after 1\.0s/);
    // The check is gone from the config: the resumed run knows it, and its timeout, only from the session's record.
    const configFile = path.join(home.configHome, 'codeloops', 'config.toml');
    fs.writeFileSync(configFile, fs.readFileSync(configFile, 'utf8').split('\n[[defaults.checks]]')[0]!);
    const resumed = await runCli(['resume', 'latest', '-n', '2'], { cwd: repo, env });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /check slow: timed out after 1\.0s/);
  });

  it("tells a resumed actor a refused DONE's failing check with its output once, as the running loop would have", async () => {
    const { repo, env, agent } = scriptedCliSetup({
      actor: [[{ write: { path: 'a.txt', content: 'a\n' } }], [{ write: { path: 'fixed.txt', content: 'fixed\n' } }]],
      critic: [[done('looks complete')]],
    });
    // The command names the words apart, so only the output says them whole.
    writeFile(repo, 'codeloops.toml', `[[checks]]\nname = "tests"\nrun = 'test -f fixed.txt || { echo "FAIL: fixed.txt" "is missing"; exit 1; }'\n`);
    const first = await runCli(['-p', 'fix it', '-n', '1', '--trust'], { cwd: repo, env });
    assert.equal(first.code, 1, first.stderr);
    const resumed = await runCli(['resume', 'latest', '-n', '2', '--trust', '--json-output'], { cwd: repo, env });
    assert.equal(resumed.code, 0, resumed.stderr);
    const prompt = agent.prompt('actor', 2);
    assert.match(prompt, /## Reviewer feedback on iteration 1\nThe reviewer judged the work done, but it is not done yet\.\n\nA required check fails/);
    assert.match(prompt, /## Reviewer feedback on iteration 1\n[^#]*- ✗ tests [^\n]*\n```[^`]*FAIL: fixed\.txt is missing/);
    assert.match(prompt, /## Checks that fail on your work\n- ✗ tests \(`[^`]+`\): failed with exit code 1 \(its output is quoted above\)\n/);
    assert.equal(prompt.split('FAIL: fixed.txt is missing').length - 1, 1, `the output is quoted once:\n${prompt}`);
  });

  it('after a rollback, resumes with the feedback from before the rolled-back iterations only', async () => {
    const { repo, env, agent } = scriptedCliSetup({
      actor: [
        [{ write: { path: 'x.txt', content: 'one\n' } }],
        [{ write: { path: 'x.txt', content: 'two\n' } }],
        [{ write: { path: 'x.txt', content: 'three\n' } }],
      ],
      critic: [[carryOnNaming('feedback on the first try')], [carryOnNaming('feedback on the second try')], [done()]],
    });
    const first = await runCli(['-p', 'write x', '-n', '2'], { cwd: repo, env });
    assert.equal(first.code, 1, first.stderr);
    const rolled = await runCli(['rollback', 'latest', '--iteration', '2'], { cwd: repo, env });
    assert.equal(rolled.code, 0, rolled.stdout + rolled.stderr);
    assert.equal(treeOf(repo)['x.txt'], 'one\n');
    const resumed = await runCli(['resume', 'latest', '-n', '3', '--json-output'], { cwd: repo, env });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /rolled back to before iteration 2: the actor gets the feedback up to then, in a fresh agent session/);
    const prompt = agent.prompt('actor', 3);
    assert.match(prompt, /feedback on the first try/);
    assert.doesNotMatch(prompt, /feedback on the second try/, 'neither the feedback nor the finding of the rolled-back iteration');
    assert.match(prompt, /F1\.1 \(error\): feedback on the first try/, 'the finding from before the rollback stays open');
    assert.equal(treeOf(repo)['x.txt'], 'three\n');

    const earlier = await runCli(['rollback', 'latest', '--iteration', '1'], { cwd: repo, env });
    assert.equal(earlier.code, 2);
    assert.match(earlier.stderr, /Iteration 1 belongs to the session this one carries on: roll back .* instead/);
  });

  it('tells the critic of a resumed run of the nested repository that appeared before it, as from before, without reporting it again', async () => {
    const elsewhere = tempDir();
    const { repo, env, agent, home } = scriptedCliSetup({
      actor: [
        [
          { write: { path: 'hidden/code.sh', content: 'echo hidden\n' } },
          { shell: ['git', 'init', '-q', `--separate-git-dir=${path.join(elsewhere, 'hidden.git')}`, 'hidden'] },
          { shell: ['git', '-c', 'user.name=a', '-c', 'user.email=a@example.com', '-C', 'hidden', 'commit', '-q', '--allow-empty', '-m', 'hide'] },
        ],
        [{ write: { path: 'x.txt', content: 'x\n' } }],
      ],
      critic: [[carryOnNaming('go on')], [done()]],
    });
    const first = await runCli(['-p', 'work', '-n', '1'], { cwd: repo, env });
    assert.equal(first.code, 1, first.stderr);
    assert.match(first.stderr, /a folder became a nested git repository .*: hidden\//);
    const resumed = await runCli(['resume', 'latest', '-n', '2', '--json-output'], { cwd: repo, env });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(agent.prompt('critic', 2), /- hidden\/ \(appeared before this run, at commit [0-9a-f]{7}\)/);
    const sessionId = (JSON.parse(resumed.stdout) as { session_id: string }).session_id;
    const events = readJsonLines(path.join(home.dataHome, 'codeloops', 'sidecars', sessionId, 'events.jsonl'));
    assert.deepEqual(
      events.filter((event) => event.type === 'nested_repositories_appeared'),
      [],
      'said once, when it appeared',
    );
  });

  it('refuses to resume over files changed since the loop, says which, and changes nothing; checks the iteration limit before starting', async () => {
    const { repo, env, agent } = scriptedCliSetup({
      actor: [[{ write: { path: 'a.txt', content: 'a\n' } }], [{ hang: true }]],
      critic: [[carryOnNaming('again')]],
    });
    const first = startCli(['-p', 'write a'], { cwd: repo, env });
    await untilCalled(agent, 'actor', 2);
    first.child.kill('SIGINT');
    assert.equal((await first.done).code, 130);
    writeFile(repo, 'a.txt', 'edited by me\n');
    writeFile(repo, 'mine.txt', 'new\n');
    const before = treeOf(repo);
    const refused = await runCli(['resume', 'latest', '-n', '3'], { cwd: repo, env });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /2 changed since its last snapshot/);
    assert.match(refused.stderr, /modified a\.txt/);
    assert.match(refused.stderr, /added mine\.txt/);
    assert.match(refused.stderr, /--force/);
    assert.deepEqual(treeOf(repo), before);

    const limit = await runCli(['resume', 'latest', '--force', '-n', '1'], { cwd: repo, env });
    assert.equal(limit.code, 2);
    assert.match(limit.stderr, /used its 1 iteration; the next would be iteration 2\.\nAllow more with -n \(for example -n 6\)/);
  });

  it('names a file a crashed loop’s agent left with escape sequences in its name as text: its sequences never reach the terminal', async () => {
    // A file whose name sets the window title, clears the screen and rings the bell, when printed as it is.
    const name = 'log\x1b]0;PWNED\x07\x1b[2J\x07.txt';
    const { repo, env, agent } = scriptedCliSetup({
      actor: [[{ write: { path: 'a.txt', content: 'a\n' } }], [{ write: { path: name, content: 'x\n' } }, { hang: true }]],
      critic: [[carryOnNaming('again')]],
    });
    const first = startCli(['-p', 'write a'], { cwd: repo, env });
    await untilCalled(agent, 'actor', 2);
    while (!fs.existsSync(path.join(repo, name))) await new Promise((resolve) => setTimeout(resolve, 20));
    // The runner crashes with its agent's file on disk, after the last snapshot.
    first.child.kill('SIGKILL');
    await first.done;
    const agentPid = Number(agent.envSeen('actor', 2).pid);
    process.kill(-agentPid, 'SIGKILL');
    assert.ok(await waitUntilGone(agentPid));

    const refused = await runCli(['resume', 'latest'], { cwd: repo, env });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /1 changed since its last snapshot\):\n {2}added log\.txt\n/);
    // eslint-disable-next-line no-control-regex -- what must not be printed
    assert.doesNotMatch(refused.stderr, /[\x00-\x08\x0b-\x1f]/);
  });

  it('refuses a session whose snapshots are gone unless --force, and a folder that is no longer a repository', async () => {
    const { repo, env, agent } = scriptedCliSetup({ actor: [[{ hang: true }]], critic: [[done()]] });
    const first = startCli(['-p', 'hang'], { cwd: repo, env });
    await untilCalled(agent, 'actor', 1);
    first.child.kill('SIGINT');
    assert.equal((await first.done).code, 130);
    for (const ref of git(repo, 'for-each-ref', '--format=%(refname)', 'refs/codeloops/').split('\n').filter(Boolean)) git(repo, 'update-ref', '-d', ref);
    const unchecked = await runCli(['resume', 'latest'], { cwd: repo, env });
    assert.equal(unchecked.code, 2);
    assert.match(
      unchecked.stderr,
      /has no snapshots in .* cannot check that the files are as the loop left them\. Nothing was changed\.\nRun again with --force/,
    );
    fs.rmSync(path.join(repo, '.git'), { recursive: true, force: true });
    const result = await runCli(['resume', 'latest'], { cwd: repo, env });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /is not inside a git repository/);
  });
});
