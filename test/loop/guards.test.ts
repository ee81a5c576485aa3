import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runCheck, type CheckSpec } from '../../src/checks/runCheck.js';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';
import { carryOn, claudeStream, decision, done } from '../support/scriptedAgent.js';
import { readJsonLines, runScriptedLoop } from '../support/scriptedLoop.js';
import { isGroupAlive } from '../../src/process/processGroup.js';
import { mkfifo } from '../support/hostileFiles.js';
import { isRunning, stopRunners, waitUntilGone } from '../support/processes.js';
import { assertValidSessionFile, DOCUMENTED_FIELDS } from '../support/sessionFormatCheck.js';
import { createRepo, git, removeTempDirs, tempDir, treeOf } from '../support/testEnvironment.js';

const check = (name: string, run: string, fields: Partial<CheckSpec> = {}): CheckSpec => ({ name, run, timeoutSecs: 60, required: true, ...fields });

/**
 * A check that passes only once `fixed.txt` exists, and says so when it fails, as a test runner would. Its
 * command names the words apart, so that only its output says "FAIL: fixed.txt is missing".
 */
const TESTS = check(
  'tests',
  'if test -f fixed.txt; then echo "1 passing"; else echo "noise before the summary"; echo "FAIL: fixed.txt" "is missing"; exit 1; fi',
);

function eventsOf<T extends RunEvent['type']>(events: RunEvent[], type: T): Extract<RunEvent, { type: T }>[] {
  return events.filter((event): event is Extract<RunEvent, { type: T }> => event.type === type);
}

/**
 * Resolves once every process that opened the named pipe for writing has closed it,
 * as the kernel closes a process's files when it dies: the event of their end.
 */
function untilEveryWriterCloses(fifo: string): { closed: Promise<void>; release: (pids: number[]) => void } {
  const reader = fs.createReadStream(fifo);
  const closed = new Promise<void>((resolve, reject) => {
    reader
      .on('data', () => {})
      .on('end', resolve)
      .on('error', reject);
  });
  return {
    closed,
    // A read still waiting holds a thread of libuv's pool, and Node waits for it to exit: end the writers left (a
    // failed test's), or come as a writer when none ever came.
    release: (pids) => {
      for (const pid of pids) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
      try {
        fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
      } catch {
        // no reader waits
      }
      reader.destroy();
    },
  };
}

/** Fails with `failure()` unless `promise` settles within `ms`: a bound on a test that must not hang, not a wait. */
async function within<T>(promise: Promise<T>, ms: number, failure: () => string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(failure())), ms)));
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}

/** What of a repository's git state is the user's: where HEAD is, on which branch, every branch, the index's bytes. */
function userGitState(repo: string) {
  // `--quiet` queries that find nothing (a detached or unborn HEAD) exit 1: that is "none" here.
  const query = (...args: string[]) => {
    try {
      return git(repo, ...args).trim();
    } catch {
      return null;
    }
  };
  const indexFile = path.join(repo, '.git', 'index');
  return {
    branch: query('symbolic-ref', '--quiet', 'HEAD'),
    head: query('rev-parse', '--verify', '--quiet', 'HEAD'),
    branches: git(repo, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads'),
    index: fs.existsSync(indexFile) ? fs.readFileSync(indexFile).toString('base64') : null,
  };
}

/** Critic feedback different enough each time that only the rule under test can see a stall. */
const VARIED_FEEDBACK = [
  'The parser ignores trailing commas in arrays',
  'Error messages should name the offending line number',
  'Please add a unit test covering empty input files',
  'Rename the helper so its purpose is obvious to readers',
  'The README example does not match the new flag spelling',
  'Consider streaming large inputs instead of buffering them',
  'Logging at debug level leaks the API token into files',
  'The changelog entry is missing for this behaviour change',
].map((feedback) => [carryOn(feedback)]);

describe('guards: evidence before DONE, budgets, stalls', () => {
  // A test that fails halfway leaves no runner or agent behind for the tests after it.
  afterEach(stopRunners);
  after(removeTempDirs);

  it("runs a check without git's location variables, so its git works on the repository it runs in", async () => {
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    const elsewhere = createRepo({ files: { 'b.txt': 'b\n' } });
    const result = await runCheck(check('where', 'git rev-parse --show-toplevel'), {
      cwd: repo,
      env: { ...process.env, GIT_DIR: path.join(elsewhere, '.git'), GIT_WORK_TREE: elsewhere },
    });
    assert.equal(result.passed, true, result.output);
    assert.equal(result.output.trim(), repo);
  });

  it('refuses DONE while a required check fails, feeds the failure back with its output once, and succeeds once it passes', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const { summary, events, agent, sidecarDir } = await runScriptedLoop(
      repo,
      {
        actor: [[{ write: { path: 'feature.txt', content: 'half done\n' } }], [{ write: { path: 'fixed.txt', content: 'fixed\n' } }]],
        critic: [[done('Looks complete, tests pass')]], // a critic that believes the actor
      },
      { checks: [TESTS] },
    );
    assert.equal(summary.status, 'success');
    assert.equal(summary.iterations, 2);

    const { lines } = assertValidSessionFile(summary.session_file);
    const first = lines[1] as Record<string, unknown>;
    assert.equal(first.critic_decision, 'CONTINUE', 'the session file keeps its three decision values');
    assert.equal(first.critic_verdict, 'DONE', "the critic's own verdict is kept beside it");
    assert.deepEqual(first.failed_checks, ['tests']);
    assert.match(first.feedback as string, /required check fails/);
    assert.match(first.feedback as string, /FAIL: fixed\.txt is missing/);
    const second = lines[2] as Record<string, unknown>;
    assert.equal(second.critic_decision, 'DONE');
    assert.equal(second.critic_verdict, undefined);
    assert.equal(second.failed_checks, undefined);

    // The critic saw the check's result; the next actor was told what failed, with its output.
    assert.match(agent.prompt('critic', 1), /tests[\s\S]*FAIL: fixed\.txt is missing/);
    const next = agent.prompt('actor', 2);
    assert.match(next, /## Reviewer feedback on iteration 1\nThe reviewer judged the work done, but it is not done yet\.\n\nA required check fails/);
    assert.match(next, /## Reviewer feedback on iteration 1\n[^#]*- ✗ tests [^\n]*\n```[^`]*noise before the summary\nFAIL: fixed\.txt is missing/);
    assert.match(next, /## Checks that fail on your work\n- ✗ tests \(`[^`]+`\): failed with exit code 1 \(its output is quoted above\)\n/);
    assert.equal(next.split('FAIL: fixed.txt is missing').length - 1, 1, `the output is quoted once:\n${next}`);

    const results = eventsOf(events, 'check_finished');
    assert.deepEqual(
      results.map((result) => [result.iteration, result.name, result.passed, result.exit_code]),
      [
        [1, 'tests', false, 1],
        [2, 'tests', true, 0],
      ],
    );
    // Each result names the tree it ran on: the tree the actor left in that iteration.
    const posts = eventsOf(events, 'snapshot').filter((snapshot) => snapshot.label === 'post');
    assert.equal(results.length, posts.length);
    assert.notEqual(results[0]!.tree, results[1]!.tree);
    assert.deepEqual(
      eventsOf(events, 'done_refused').map((refusal) => [refusal.iteration, refusal.failed_checks]),
      [[1, ['tests']]],
    );
    // The sidecar keeps the same records.
    const recorded = readJsonLines(path.join(sidecarDir, 'events.jsonl')).filter((event) => event.type === 'check_finished');
    assert.equal(recorded.length, 2);
    assert.match(recorded[0]!.output as string, /FAIL: fixed\.txt is missing/);
  });

  it('kills a check that hangs at its timeout, with its children, and counts it as failed', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const pidFile = path.join(tempDir(), 'check.pid');
    const hanging = check('hangs', `sleep 600 & echo $! > ${JSON.stringify(pidFile)}; echo started; wait`, { timeoutSecs: 1 });
    const { summary, events } = await runScriptedLoop(
      repo,
      { actor: [[{ write: { path: 'a.txt', content: 'a\n' } }]], critic: [[done()]] },
      { checks: [hanging], maxIterations: 1 },
    );
    const [result] = eventsOf(events, 'check_finished');
    assert.equal(result?.timed_out, true);
    assert.equal(result?.passed, false);
    assert.match(result!.output, /started/);
    assert.equal(isRunning(Number(fs.readFileSync(pidFile, 'utf8'))), false, "the check's child was stopped with it");
    // DONE was refused; with one iteration allowed the loop ends at its limit, not in success.
    assert.equal(summary.status, 'max_iterations_reached');
  });

  it("stops a hanging check's whole process group at its timeout, a grandchild that ignores SIGINT and SIGTERM included", async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const dir = tempDir();
    const fifo = mkfifo(path.join(dir, 'held-open'));
    const [groupFile, grandchildFile] = [path.join(dir, 'group.pid'), path.join(dir, 'grandchild.pid')];
    // The grandchild holds none of the check's output: only stopping the group ends it. It holds the pipe instead.
    const hanging = check(
      'hangs',
      `echo $$ > ${JSON.stringify(groupFile)}; (trap '' INT TERM; exec sleep 600) < /dev/null > /dev/null 2>&1 3> ${JSON.stringify(fifo)} & ` +
        `echo $! > ${JSON.stringify(grandchildFile)}; echo started; wait`,
      { timeoutSecs: 1 },
    );
    const pipe = untilEveryWriterCloses(fifo);
    const pidIn = (file: string) => (fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8')) : NaN);
    try {
      const loop = runScriptedLoop(
        repo,
        { actor: [[{ write: { path: 'a.txt', content: 'a\n' } }]], critic: [[done()]] },
        { checks: [hanging], maxIterations: 1 },
      );
      // SIGINT at 1 s, SIGTERM and SIGKILL within 2 s more: the group is gone long before this bound, or never.
      const live = () =>
        `the check's process group ${pidIn(groupFile)} still runs (its grandchild ${pidIn(grandchildFile)}: ${isRunning(pidIn(grandchildFile))})`;
      await within(pipe.closed, 15_000, live);
      const { events } = await within(loop, 15_000, () => `the loop did not go on after its check: ${live()}`);
      assert.equal(isGroupAlive(pidIn(groupFile)), false, 'nothing of the check’s group runs once the gate has returned');
      assert.equal(isRunning(pidIn(grandchildFile)), false);
      const [result] = eventsOf(events, 'check_finished');
      assert.deepEqual([result?.timed_out, result?.passed, result?.exit_code], [true, false, null]);
      assert.match(result!.output, /started[\s\S]*stopped after 1 s/);
    } finally {
      pipe.release([pidIn(grandchildFile)].filter((pid) => pid > 1));
    }
  });

  it('takes the exit code of a check that exits leaving a process holding its output (a test server), without waiting for its timeout; the process is ended', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const dir = tempDir();
    // Each leaves a server behind that holds its stdout and stderr, and exits: one with 0, one with 3.
    const leavingServer = (name: string, exit: number) =>
      check(name, `sleep 600 & echo $! > ${JSON.stringify(path.join(dir, `${name}.pid`))}; echo "${name} ran"; exit ${exit}`, {
        timeoutSecs: 10,
        required: exit === 0,
      });
    const { summary, events } = await runScriptedLoop(
      repo,
      { actor: [[{ write: { path: 'a.txt', content: 'a\n' } }]], critic: [[done()]] },
      { checks: [leavingServer('tests', 0), leavingServer('lint', 3)], maxIterations: 1 },
    );
    assert.deepEqual(
      eventsOf(events, 'check_finished').map((result) => [result.name, result.passed, result.exit_code, result.timed_out]),
      [
        ['tests', true, 0, false],
        ['lint', false, 3, false],
      ],
    );
    assert.match(eventsOf(events, 'check_finished')[0]!.output, /tests ran/);
    assert.equal(summary.status, 'success', 'the required check passed: DONE stands');
    for (const name of ['tests', 'lint']) {
      assert.ok(await waitUntilGone(Number(fs.readFileSync(path.join(dir, `${name}.pid`), 'utf8'))), `the server ${name} left was ended with its group`);
    }
  });

  it('fails a check whose folder is not there, saying which folder (not "spawn sh ENOENT")', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    // A project file's folder that a candidate's worktree lacks (a folder of ignored files only).
    const { events } = await runScriptedLoop(
      repo,
      { actor: [[{ write: { path: 'a.txt', content: 'a\n' } }]], critic: [[done()]] },
      { checks: [check('tests', 'true', { folder: 'ignored/project' })], maxIterations: 1 },
    );
    const [result] = eventsOf(events, 'check_finished');
    assert.deepEqual([result?.passed, result?.exit_code], [false, null]);
    assert.ok(result!.output.includes(`its folder ${path.join(repo, 'ignored', 'project')} does not exist`), result!.output);
  });

  it('shows advisory checks to the critic but never lets them block DONE', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const lint = check('lint', 'echo "style: 3 warnings"; exit 1', { required: false });
    const { summary, agent, events } = await runScriptedLoop(
      repo,
      { actor: [[{ write: { path: 'a.txt', content: 'a\n' } }]], critic: [[done()]] },
      { checks: [lint] },
    );
    assert.equal(summary.status, 'success');
    assert.equal(summary.iterations, 1);
    assert.match(agent.prompt('critic', 1), /lint[\s\S]*style: 3 warnings/);
    assert.equal(eventsOf(events, 'done_refused').length, 0);
  });

  it('puts back what a check changed: a check judges the tree, it does not fix it', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const formatter = check('format', 'echo formatted > a.txt');
    const { summary } = await runScriptedLoop(
      repo,
      { actor: [[{ write: { path: 'a.txt', content: 'the actor wrote this\n' } }]], critic: [[done()]] },
      { checks: [formatter] },
    );
    assert.equal(summary.status, 'success');
    assert.equal(fs.readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'the actor wrote this\n');
  });

  it('puts back HEAD, its branch and the index when a check commits, on a branch, detached or unborn, or on a branch of its own', async () => {
    const commitAll = 'git add -A && git -c user.name=check -c user.email=check@localhost commit -qm "by the check"';
    const layouts: Array<{ layout: string; prepare: (repo: string) => void; run: string; said: RegExp }> = [
      {
        layout: 'on a branch',
        prepare: () => {},
        run: commitAll,
        said: /the checks changed the repository; moved main back to [0-9a-f]{12} \(the commit [0-9a-f]{12} the checks made is kept in its reflog\); restored the index/,
      },
      {
        layout: 'detached',
        prepare: (repo) => git(repo, 'checkout', '-q', '--detach'),
        run: commitAll,
        said: /put HEAD back at [0-9a-f]{12}, detached; restored the index/,
      },
      {
        layout: 'unborn',
        prepare: () => {},
        run: commitAll,
        said: /deleted the branch main the checks made \(it was at [0-9a-f]{12}\); removed the index the checks made/,
      },
      {
        layout: 'on a branch of its own',
        prepare: () => {},
        run: `git checkout -q -b scratch && ${commitAll}`,
        said: /switched back to main; deleted the branch scratch the checks made \(it was at [0-9a-f]{12}\); restored the index/,
      },
    ];
    for (const { layout, prepare, run, said } of layouts) {
      const repo = createRepo({ files: { 'README.md': '# demo\n' }, commit: layout !== 'unborn' });
      prepare(repo);
      if (layout !== 'unborn') {
        // The user's own staged work: the index is theirs, not only the files.
        fs.writeFileSync(path.join(repo, 'staged.txt'), 'staged by the user\n');
        git(repo, 'add', 'staged.txt');
      }
      const before = userGitState(repo);
      const { summary, events } = await runScriptedLoop(
        repo,
        { actor: [[{ write: { path: 'a.txt', content: 'the actor wrote this\n' } }]], critic: [[done()]] },
        { checks: [check('commits', `${run} && git rev-parse HEAD`)], maxIterations: 1 },
      );
      assert.equal(eventsOf(events, 'check_finished')[0]?.passed, true, `${layout}: the check made its commit`);
      assert.equal(summary.status, 'success', layout);
      assert.deepEqual(userGitState(repo), before, `${layout}: HEAD, the branches and the index are as they were`);
      assert.equal(treeOf(repo)['a.txt'], 'the actor wrote this\n', layout);
      const warnings = eventsOf(events, 'warning').map((warning) => warning.message);
      assert.ok(
        warnings.some((message) => said.test(message)),
        `${layout}: ${warnings.join('\n')}`,
      );
      assert.ok(!warnings.some((message) => /critic/.test(message)), `${layout}: the checks are named, not the critic`);
      if (layout === 'on a branch') {
        // The branch's reflog tells what happened: the check's commit stays findable there.
        assert.match(git(repo, 'reflog', 'show', '--format=%gs', 'main'), /^codeloops: undo the checks\ncommit: by the check\n/);
      }
    }
  });

  it('stops an actor that goes back and forth between two trees, saying what repeated and since when', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const write = (content: string) => [{ write: { path: 'switch.txt', content } }];
    const { summary, events } = await runScriptedLoop(
      repo,
      { actor: [write('on\n'), write('off\n'), write('on\n'), write('off\n'), write('on\n'), write('off\n')], critic: VARIED_FEEDBACK },
      { stall: { unchangedIterations: 2, action: 'stop' }, maxIterations: 8 },
    );
    assert.equal(summary.status, 'failed');
    assert.equal(summary.stop_reason, 'stalled');
    assert.equal(summary.error_code, 'stalled');
    assert.equal(summary.iterations, 4);
    assert.match(summary.error!, /back to how they were after iteration \d/);
    assert.match(summary.error!, /iterations 3–4/);
    const { lines } = assertValidSessionFile(summary.session_file);
    const end = lines.at(-1) as Record<string, unknown>;
    assert.equal(end.outcome, 'failed');
    assert.equal(end.stop_reason, 'stalled');
    assert.deepEqual(
      eventsOf(events, 'stall').map((stall) => [stall.iteration, stall.action, stall.since_iteration]),
      [[4, 'stop', 3]],
    );
  });

  it('does not stop an actor that adds one real line per iteration while the critic repeats its wording', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const steps = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
    const { summary, events } = await runScriptedLoop(
      repo,
      {
        actor: steps.map((_, index) => [{ write: { path: 'steps.txt', content: steps.slice(0, index + 1).join('\n') + '\n' } }]),
        critic: [...steps.slice(1).map(() => [carryOn('Add the next step to steps.txt; the list is not complete yet.')]), [done('all five steps')]],
      },
      { stall: { unchangedIterations: 3, action: 'stop' }, maxIterations: 8 },
    );
    assert.equal(summary.status, 'success', summary.error ?? '');
    assert.equal(summary.iterations, 5);
    assert.equal(eventsOf(events, 'stall').length, 0);
  });

  it('stops when the critic says nearly, not exactly, the same thing while the files make no progress', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const { summary, events } = await runScriptedLoop(
      repo,
      {
        actor: [[{ write: { path: 'parser.txt', content: 'a first attempt\n' } }], [{ print: 'I think it is fine.' }]],
        // Worded differently each time (not only in numbers, which the comparison leaves out), saying the same.
        critic: [
          [carryOn('The parser still ignores trailing commas in arrays and objects; handle them and add a test for each case.')],
          [carryOn('The parser still ignores the trailing commas in arrays and objects; handle them and add a test for each case.')],
          [carryOn('The parser still ignores the trailing commas in arrays and objects; handle them and add one test for each case.')],
        ],
      },
      { stall: { unchangedIterations: 3, action: 'stop' }, maxIterations: 6 },
    );
    assert.equal(summary.stop_reason, 'stalled');
    assert.equal(summary.iterations, 3, 'two iterations without progress after the feedback was first given, three times said');
    assert.match(
      summary.error!,
      /the critic gave nearly the same feedback in iterations 1–3, and the files made no progress since: "The parser still ignores the trailing commas in arrays and objects; handle them and add one test/,
    );
    assert.deepEqual(
      eventsOf(events, 'stall').map((stall) => [stall.iteration, stall.since_iteration]),
      [[3, 1]],
    );
  });

  it('a required check failing on the way to passing is progress: DONE refused again and again does not stall a loop that changes the files', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const steps = ['alpha', 'beta', 'gamma', 'delta'];
    // A test report that differs only in its count, as a test runner's does: the comparison of outputs leaves numbers out.
    const stepsCheck = check(
      'steps',
      'found=$(wc -l < steps.txt); echo "$found of 4 steps written"; test "$found" -eq 4 || { echo "FAIL: steps are missing"; exit 1; }',
    );
    const { summary, events } = await runScriptedLoop(
      repo,
      {
        actor: steps.map((_, index) => [{ write: { path: 'steps.txt', content: steps.slice(0, index + 1).join('\n') + '\n' } }]),
        critic: [[done('Looks complete', 0.9)]], // a critic that believes the actor every time
      },
      { checks: [stepsCheck], maxIterations: 8 },
    );
    assert.equal(summary.status, 'success', summary.error ?? '');
    assert.equal(summary.iterations, 4);
    assert.deepEqual(
      eventsOf(events, 'done_refused').map((refusal) => refusal.iteration),
      [1, 2, 3],
    );
    assert.equal(eventsOf(events, 'stall').length, 0);
  });

  it('nudges a stuck actor once; an actor that changes approach goes on to finish', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const idle = [{ print: 'I looked around.' }];
    const { summary, agent, events } = await runScriptedLoop(
      repo,
      {
        actor: [idle, idle, [{ write: { path: 'done.txt', content: 'finally\n' } }]],
        critic: [...VARIED_FEEDBACK.slice(0, 2), [done('done.txt exists')]],
      },
      { stall: { unchangedIterations: 2, action: 'nudge' } },
    );
    assert.equal(summary.status, 'success');
    assert.equal(summary.iterations, 3);
    assert.deepEqual(
      eventsOf(events, 'stall').map((stall) => [stall.iteration, stall.action]),
      [[2, 'nudge']],
    );
    assert.doesNotMatch(agent.prompt('actor', 2), /going in circles/);
    assert.match(agent.prompt('actor', 3), /You are going in circles\nSince iteration 1, the actor changed nothing in iterations 1–2/);
  });

  it('stops an actor that goes on in circles after its nudge', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const { summary, events } = await runScriptedLoop(
      repo,
      { actor: [[{ print: 'Nothing to do.' }]], critic: VARIED_FEEDBACK },
      { stall: { unchangedIterations: 2, action: 'nudge' }, maxIterations: 8 },
    );
    assert.equal(summary.stop_reason, 'stalled');
    assert.equal(summary.iterations, 4);
    assert.deepEqual(
      eventsOf(events, 'stall').map((stall) => [stall.iteration, stall.action]),
      [
        [2, 'nudge'],
        [4, 'stop'],
      ],
    );
  });

  it('stops on the same failing check output while the files make no progress, and never calls a refused DONE the critic repeating itself', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const attempt = [{ write: { path: 'attempt.txt', content: 'the same attempt\n' } }];
    const { summary } = await runScriptedLoop(
      repo,
      // The first attempt changes the files; the later ones write the same again. The critic believes it every time.
      { actor: [attempt], critic: [[done('Looks complete', 0.9)]] },
      { checks: [TESTS], stall: { unchangedIterations: 3, action: 'stop' }, maxIterations: 6 },
    );
    assert.equal(summary.stop_reason, 'stalled');
    assert.equal(summary.iterations, 3);
    assert.match(summary.error!, /the same checks failed the same way in iterations 1–3, and the files made no progress since: tests/);
    assert.doesNotMatch(summary.error!, /critic/, "the refusal's text is the runner's, not the critic's");
  });

  it('turns stall detection off with 0', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const { summary } = await runScriptedLoop(
      repo,
      { actor: [[{ print: 'Nothing to do.' }]], critic: [[carryOn('Same feedback every time')]] },
      { stall: { unchangedIterations: 0, action: 'stop' }, maxIterations: 4 },
    );
    assert.equal(summary.status, 'max_iterations_reached');
    assert.equal(summary.stop_reason, null);
  });

  it('ends at its time budget: the running actor is stopped with its process group and the session says why', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const { summary, agent } = await runScriptedLoop(
      repo,
      { actor: [[{ write: { path: 'partial.txt', content: 'started\n' } }, { spawnChild: true }, { hang: true }]], critic: [[done()]] },
      { budget: { maxDurationSecs: 1 }, timeoutSecs: { actor: 600 } },
    );
    assert.equal(summary.status, 'failed');
    assert.equal(summary.stop_reason, 'duration');
    assert.equal(summary.error_code, 'budget_exceeded');
    assert.match(summary.error!, /time budget of 1 s/);
    assert.equal(agent.calls('critic'), 0, 'nothing runs after the cap');
    const { lines } = assertValidSessionFile(summary.session_file);
    const end = lines.at(-1) as Record<string, unknown>;
    assert.equal(end.stop_reason, 'duration');
    // The actor's partial work is kept in the post snapshot, and nothing it started lives on.
    assert.equal(fs.readFileSync(path.join(repo, 'partial.txt'), 'utf8'), 'started\n');
    const childPid = Number(fs.readFileSync(path.join(agent.dir, 'grandchild.pid'), 'utf8'));
    assert.equal(isRunning(childPid), false);
  });

  it('stops the actor mid-turn once the estimated cost of a model the price table does not know crosses the cap', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const model = 'scripted-model-nobody-prices';
    const usage = { input_tokens: 1_000, output_tokens: 200 };
    // At the table's highest price ($15 in, $75 out per million tokens) each call is estimated at $0.03: the second crosses $0.05.
    const callCost = 0.03;
    const cap = 0.05;
    const { summary, events, agent } = await runScriptedLoop(
      repo,
      {
        actor: [
          [
            claudeStream.call('msg-1', model, usage, 'Reading the code.'),
            claudeStream.call('msg-2', model, usage, 'Writing the change.'),
            // The model call after them takes a while; an agent not stopped by then finishes its turn and says it cost $5.
            { sleep: 20_000 },
            claudeStream.call('msg-3', model, usage, 'Done.'),
            { write: { path: 'turn-finished.txt', content: 'the turn ran to its end\n' } },
            claudeStream.result('Done.', 5, { input_tokens: 3_000, output_tokens: 600 }),
          ],
        ],
        critic: [[claudeStream.result('<decision>{"type":"done","summary":"done","confidence":0.9}</decision>', 0.01, usage)]],
      },
      { agentKind: 'claude', model, budget: { maxCostUsd: cap } },
    );
    assert.equal(summary.status, 'failed');
    assert.equal(summary.stop_reason, 'budget_cost');
    assert.equal(summary.error_code, 'budget_exceeded');
    // Stopped in the middle of its turn: it never reached its end, and nothing ran after it.
    assert.equal(fs.existsSync(path.join(repo, 'turn-finished.txt')), false, 'the turn did not finish');
    const [actorRun] = eventsOf(events, 'agent_finished');
    assert.equal(actorRun?.interrupted, true, 'the actor was stopped as on an interrupt');
    assert.equal(agent.calls('critic'), 0);
    assert.match(summary.error!, /over the budget of \$0\.05/);
    assert.match(summary.error!, new RegExp(`no price for "${model}": until its agent says what they cost, its tokens count at the table's highest price`));
    // The total is the estimate, within one model call's cost of the cap.
    assert.equal(summary.cost_estimated, true);
    assert.ok(summary.total_cost_usd! > cap && summary.total_cost_usd! <= cap + callCost, `total_cost_usd ${summary.total_cost_usd}`);
    const { end } = assertValidSessionFile(summary.session_file);
    assert.equal(end?.total_cost_usd, summary.total_cost_usd);
    assert.equal(end?.cost_estimated, true);
  });

  it("records the agent's own cost when it gives one, instead of the estimate made while it ran", async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const model = 'scripted-model-nobody-prices';
    const usage = { input_tokens: 1_000, output_tokens: 200 };
    const { summary } = await runScriptedLoop(
      repo,
      {
        actor: [
          [
            claudeStream.call('msg-1', model, usage, 'Writing.'),
            { write: { path: 'a.txt', content: 'a\n' } },
            claudeStream.result('Wrote a.txt.', 0.002, usage),
          ],
        ],
        critic: [[claudeStream.result('<decision>{"type":"done","summary":"a.txt exists","confidence":0.9}</decision>', 0.001, usage)]],
      },
      { agentKind: 'claude', model, budget: { maxCostUsd: 1 } },
    );
    assert.equal(summary.status, 'success', summary.error ?? '');
    assert.equal(summary.total_cost_usd, 0.003);
    assert.equal(summary.cost_estimated, false);
    assert.equal(summary.total_tokens, 2_400);
  });

  it("keeps a real session's documented fields first and in the documented order, its extra fields after them", async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const finding = { file: 'attempt.txt', line: 1, severity: 'warning', message: 'say more' };
    const { summary } = await runScriptedLoop(
      repo,
      {
        // One change, then the same again: the check keeps failing the same way and the loop stalls.
        actor: [[{ write: { path: 'attempt.txt', content: 'the same attempt\n' } }]],
        critic: [[decision({ type: 'done', summary: 'Looks complete', confidence: 0.9, findings: [finding] })]],
      },
      { checks: [TESTS], stall: { unchangedIterations: 3, action: 'stop' }, maxIterations: 6 },
    );
    assert.equal(summary.stop_reason, 'stalled');
    const lines = readJsonLines(summary.session_file);
    const extrasOf = (line: Record<string, unknown>) => Object.keys(line).slice(DOCUMENTED_FIELDS[line.type as keyof typeof DOCUMENTED_FIELDS].length);
    const iteration = lines[1]!;
    const end = lines.at(-1)!;
    assert.deepEqual(Object.keys(iteration).slice(0, DOCUMENTED_FIELDS.iteration.length), [...DOCUMENTED_FIELDS.iteration]);
    assert.deepEqual(extrasOf(iteration).sort(), ['critic_verdict', 'failed_checks', 'findings', 'git_deletions', 'git_insertions', 'remaining_issues']);
    assert.deepEqual(Object.keys(end).slice(0, DOCUMENTED_FIELDS.session_end.length), [...DOCUMENTED_FIELDS.session_end]);
    for (const extra of ['error', 'error_code', 'stop_reason', 'total_tokens'])
      assert.ok(extrasOf(end).includes(extra), `${extra} after the documented fields`);
    assert.deepEqual(Object.keys(lines[0]!), [...DOCUMENTED_FIELDS.session_start]);
    assertValidSessionFile(summary.session_file);
  });
});
