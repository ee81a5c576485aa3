import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { AGENT_KINDS } from '../../src/agents/agentKinds.js';
import { runEventSchema } from '../../src/sessionFormat/runEvents.js';
import { runCli, startCli } from '../support/cliProcess.js';
import { isRunning, stopRunners, waitUntilGone } from '../support/processes.js';
import { carryOn, done, scriptedCliSetup } from '../support/scriptedAgent.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { git, removeTempDirs, repoRoot, tempDir, writeFile } from '../support/testEnvironment.js';

function sessionFiles(sessionsDir: string): string[] {
  return fs.existsSync(sessionsDir) ? fs.readdirSync(sessionsDir).map((name) => path.join(sessionsDir, name)) : [];
}

describe('codeloops run (the built CLI)', () => {
  // A test that fails halfway leaves no runner or agent behind for the tests after it.
  afterEach(stopRunners);
  after(removeTempDirs);

  it('exits 0 on success and prints one JSON object with --json-output', async () => {
    const { repo, env, home } = scriptedCliSetup({ actor: [[{ write: { path: 'x.txt', content: 'x' } }]], critic: [[done('made x', 0.8)]] });
    const result = await runCli(['-p', 'make x', '--json-output'], { cwd: repo, env });
    assert.equal(result.code, 0, result.stderr);
    const output = JSON.parse(result.stdout) as Record<string, unknown>;
    assert.deepEqual(Object.keys(output).sort(), [
      'confidence',
      'cost_estimated',
      'error',
      'error_code',
      'failure',
      'iterations',
      'session_file',
      'session_id',
      'status',
      'stop_reason',
      'summary',
      'total_cost_usd',
      'total_duration_secs',
      'total_tokens',
      'verification',
      'verified_by',
    ]);
    assert.equal(output.status, 'success');
    assert.deepEqual(output.verified_by, { start_tests: null, new_tests: 0, exit_code_checks: [], critic_commands: 0 }, "the critic's word alone");
    assert.equal(output.iterations, 1);
    assert.equal(output.summary, 'made x');
    assert.equal(output.confidence, 0.8);
    assert.equal(output.error, null);
    assert.equal(output.error_code, null);
    assert.equal(output.failure, null, 'a success carries no failure');
    assert.equal(output.stop_reason, null, 'the critic said DONE: no guard stopped it');
    assert.equal(output.session_file, path.join(home.sessionsDir, `${output.session_id as string}.jsonl`));
    assertValidSessionFile(output.session_file as string);
    assert.match(result.stderr, /── Iteration 1 ──/);
    assert.match(result.stderr, /critic: DONE \(confidence 80%\)/);
  });

  it('exits 1 at the iteration limit, reading the task from prompt.md', async () => {
    const { repo, env, agent } = scriptedCliSetup({ actor: [[{ print: 'hm' }]], critic: [[carryOn('more')]] });
    writeFile(repo, 'prompt.md', '# Task\nDo the thing 🎯\n');
    const result = await runCli(['-n', '2', '--json-output'], { cwd: repo, env });
    assert.equal(result.code, 1, result.stderr);
    assert.equal(JSON.parse(result.stdout).status, 'max_iterations_reached');
    assert.equal(agent.prompt('actor', 1), '# Task\nDo the thing 🎯\n');
  });

  it('exits 2 when the loop fails, with the error in the JSON', async () => {
    const { repo, env } = scriptedCliSetup({ actor: [[{ exit: 1 }]], critic: [[carryOn('crashed')]] });
    const result = await runCli(['run', '-p', 'x', '--json-output'], { cwd: repo, env });
    assert.equal(result.code, 2);
    const output = JSON.parse(result.stdout);
    assert.equal(output.status, 'failed');
    assert.match(output.error, /failed 2 times in a row/);
    assert.equal(output.error_code, 'actor_failed');
  });

  it('exits 2 naming the filter and its missing program when the repository needs Git LFS and it is not installed', async () => {
    const { repo, env } = scriptedCliSetup({ actor: [[{ write: { path: 'x.txt', content: 'x' } }]], critic: [[done()]] });
    writeFile(repo, '.gitattributes', '*.bin filter=lfs -text\n');
    writeFile(repo, 'weights.bin', 'large\n');
    git(repo, 'config', 'filter.lfs.required', 'true');
    git(repo, 'config', 'filter.lfs.process', 'codeloops-test-missing-lfs filter-process');
    const result = await runCli(['-p', 'make x', '--json-output'], { cwd: repo, env });
    assert.equal(result.code, 2, result.stderr);
    const output = JSON.parse(result.stdout);
    assert.equal(output.error_code, 'git_filter_failed');
    assert.match(output.error, /"lfs" filter .*its program codeloops-test-missing-lfs is not installed or not on PATH/);
    assert.match(result.stderr, /Install it \(Git LFS: https:\/\/git-lfs\.com/);
  });

  it('runs nothing a cloned project file names until it is trusted; --check and --no-checks on the command line', async () => {
    const { repo, env, home } = scriptedCliSetup({ actor: [[{ write: { path: 'x.txt', content: 'x' } }]], critic: [[done('made x')]] });
    writeFile(repo, 'codeloops.toml', '[[checks]]\nname = "marker"\nrun = "echo ran > checked.txt"\n');
    const refused = await runCli(['-p', 'make x', '--json-output'], { cwd: repo, env });
    assert.equal(refused.code, 2, refused.stderr);
    const output = JSON.parse(refused.stdout);
    assert.equal(output.error_code, 'project_untrusted');
    assert.deepEqual(output.error_details.programs, [{ key: '[[checks]] marker', runs: `sh -c "echo ran > checked.txt" (in ${repo})` }]);
    const told = await runCli(['-p', 'make x'], { cwd: repo, env });
    assert.equal(told.code, 2);
    assert.match(told.stderr, /would run programs on this machine[\s\S]*codeloops trust/, 'says what and how to go on');
    assert.equal(fs.existsSync(path.join(repo, 'checked.txt')), false, 'nothing ran');
    assert.deepEqual(sessionFiles(home.sessionsDir), [], 'no session was started');

    const trusted = await runCli(['trust'], { cwd: repo, env });
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.match(trusted.stdout, /\[\[checks\]\] marker: sh -c "echo ran > checked.txt"/);
    const ran = await runCli(['-p', 'make x', '--json-output', '--check', 'test -f x.txt'], { cwd: repo, env });
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stderr, /check marker: passed/);
    assert.match(ran.stderr, /check test -f x\.txt: passed/);
    assert.equal(fs.existsSync(path.join(repo, 'checked.txt')), false, 'what a check changes is put back: it judges, it does not edit');

    fs.rmSync(path.join(repo, 'x.txt')); // a loop that changes nothing is not done: the next one makes x again
    const none = await runCli(['-p', 'make x', '--json-output', '--no-checks'], { cwd: repo, env });
    assert.equal(none.code, 0, none.stderr);
    assert.doesNotMatch(none.stderr, /check marker/);
  });

  it('takes the exit code of a check that leaves a server running, at once, and ends the server', async () => {
    const { repo, env } = scriptedCliSetup({ actor: [[{ write: { path: 'x.txt', content: 'x' } }]], critic: [[done('made x')]] });
    const serverPid = path.join(tempDir(), 'server.pid');
    const check = `sleep 600 & echo $! > ${JSON.stringify(serverPid)}; echo "3 passing"`;
    // A --check may take 10 minutes: a gate that waits for the server the check left is cut off long before.
    const result = await runCli(['-p', 'make x', '--check', check], { cwd: repo, env, timeoutMs: 30_000 });
    assert.equal(result.timedOut, false, `the run waited for the server the check left:\n${result.stderr}`);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /check sleep 600 .*: passed/);
    assert.ok(await waitUntilGone(Number(fs.readFileSync(serverPid, 'utf8'))), 'the server was ended with the check');
  });

  it('puts HEAD and the index back after a check that commits, and says what it undid', async () => {
    const { repo, env } = scriptedCliSetup({ actor: [[{ write: { path: 'x.txt', content: 'x' } }]], critic: [[done('made x')]] });
    git(repo, 'checkout', '-q', '--detach');
    fs.writeFileSync(path.join(repo, 'staged.txt'), 'the user staged this\n');
    git(repo, 'add', 'staged.txt');
    const head = git(repo, 'rev-parse', 'HEAD');
    const index = fs.readFileSync(path.join(repo, '.git', 'index'));
    const commits = 'git add -A && git -c user.name=check -c user.email=check@localhost commit -qm "by the check"';
    const result = await runCli(['-p', 'make x', '--check', commits], { cwd: repo, env });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /check git add -A .*: passed/);
    assert.match(result.stderr, /the checks changed the repository; put HEAD back at [0-9a-f]{12}, detached; restored the index/);
    assert.equal(git(repo, 'rev-parse', 'HEAD'), head);
    assert.throws(() => git(repo, 'symbolic-ref', '--quiet', 'HEAD'), 'still detached');
    assert.ok(fs.readFileSync(path.join(repo, '.git', 'index')).equals(index), 'the index is byte for byte what the user staged');
    assert.equal(fs.readFileSync(path.join(repo, 'x.txt'), 'utf8'), 'x');
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`exits 130 within seconds on ${signal}, killing the agent and ending the session interrupted`, async () => {
      const { repo, env, home, agent } = scriptedCliSetup({ actor: [[{ spawnChild: true }, { print: 'thinking hard' }, { hang: true }]], critic: [[done()]] });
      const run = startCli(['-p', 'x'], { cwd: repo, env });
      await run.waitForStderr(/thinking hard/);
      run.child.kill(signal);
      const result = await run.done;
      assert.equal(result.code, 130, result.stderr);
      assert.equal(agent.calls('critic'), 0);
      const [file] = sessionFiles(home.sessionsDir);
      const { lines } = assertValidSessionFile(file!);
      assert.equal(lines.at(-1)!.outcome, 'interrupted');
      const agentPid = Number(agent.envSeen('actor', 1).pid);
      const grandchild = Number(fs.readFileSync(path.join(agent.dir, 'grandchild.pid'), 'utf8'));
      for (const pid of [agentPid, grandchild]) assert.ok(!isRunning(pid), 'the agent and its children are gone');
    });
  }

  it('ends the session when the terminal closes (SIGHUP), and writes session_end even on a second Ctrl+C', async () => {
    for (const signals of [['SIGHUP'], ['SIGINT', 'SIGINT']] as const) {
      const { repo, env, home } = scriptedCliSetup({ actor: [[{ print: 'thinking hard' }, { hang: true }]], critic: [[done()]] });
      const run = startCli(['-p', 'x'], { cwd: repo, env });
      await run.waitForStderr(/thinking hard/);
      for (const signal of signals) run.child.kill(signal);
      const result = await run.done;
      assert.equal(result.code, 130, `${signals.join('+')}: ${result.stderr}`);
      const [file] = sessionFiles(home.sessionsDir);
      const { lines } = assertValidSessionFile(file!);
      assert.equal(lines.at(-1)!.outcome, 'interrupted', signals.join('+'));
      assert.ok(!fs.existsSync(path.join(repo, '.git', 'codeloops.lock')), 'the lock is released');
      assert.deepEqual(
        fs.readdirSync(path.join(repo, '.git')).filter((name) => name.startsWith('codeloops-')),
        [],
        'no temporary index left',
      );
    }
  });

  it('stops cleanly when whoever reads its events goes away (| head -1)', async () => {
    const { repo, env, home } = scriptedCliSetup({ actor: [[{ print: 'working' }, { sleep: 60_000 }]], critic: [[done()]] });
    const run = startCli(['-p', 'x', '--events', 'ndjson'], { cwd: repo, env });
    await new Promise<void>((resolve) => run.child.stdout!.once('data', () => resolve()));
    run.child.stdout!.destroy(); // the reader closes its end of the pipe
    const result = await run.done;
    assert.equal(result.code, 130, result.stderr);
    const { lines } = assertValidSessionFile(sessionFiles(home.sessionsDir)[0]!);
    assert.equal(lines.at(-1)!.outcome, 'interrupted');
  });

  it('never lets an agent’s escape sequences reach the terminal', async () => {
    const { repo, env } = scriptedCliSetup({
      actor: [[{ write: { path: 'x.txt', content: 'x\n' } }, { print: 'title\u001b]0;pwned\u0007 clip\u001b]52;c;ZXZpbA==\u0007 \u001b[2Jcleared' }]],
      critic: [[done()]],
    });
    const result = await runCli(['-p', 'x'], { cwd: repo, env });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /title clip cleared/);
    assert.ok(!result.stderr.includes('\u001b'), 'no escape character reaches the terminal');
  });

  it('reads --prompt-file from where the user stands, not from -d', async () => {
    const { repo, env, agent } = scriptedCliSetup({ actor: [[{ write: { path: 'x.txt', content: 'x\n' } }, { print: 'ok' }]], critic: [[done()]] });
    const elsewhere = tempDir();
    fs.writeFileSync(path.join(elsewhere, 'task.md'), 'the task from elsewhere');
    const result = await runCli(['-d', repo, '--prompt-file', 'task.md'], { cwd: elsewhere, env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(agent.prompt('actor', 1), 'the task from elsewhere');
    const missing = await runCli(['-d', repo, '--prompt-file', 'nope.md'], { cwd: elsewhere, env });
    assert.match(missing.stderr, /Cannot read the prompt file .*nope\.md: it does not exist/);
  });

  it('streams validated run events as NDJSON with --events ndjson', async () => {
    const { repo, env } = scriptedCliSetup({ actor: [[{ write: { path: 'x.txt', content: 'x\n' } }, { print: 'hi' }]], critic: [[done()]] });
    const result = await runCli(['-p', 'x', '--events', 'ndjson'], { cwd: repo, env });
    assert.equal(result.code, 0, result.stderr);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => runEventSchema.parse(JSON.parse(line)));
    assert.equal(events[0]!.type, 'run_started');
    assert.equal(events.at(-1)!.type, 'run_finished');
    assert.ok(events.some((event) => event.type === 'agent_event' && event.event.kind === 'text' && event.event.text === 'hi'));
    assert.equal(result.stderr, '');
  });

  it('on a native Windows refuses every command before it starts, naming where it runs instead; --help and --version still answer', async () => {
    const { repo, env, agent } = scriptedCliSetup({ actor: [[{ write: { path: 'a.txt', content: 'a\n' } }]], critic: [[done()]] });
    const windows = { ...env, NODE_OPTIONS: `--require ${path.join(repoRoot(), 'test', 'fixtures', 'platforms', 'nativeWindows.cjs')}` };
    const run = await runCli(['-p', 'write a.txt'], { cwd: repo, env: windows });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /runs on Linux and macOS: it relies on POSIX process groups/);
    assert.match(run.stderr, /Run it in WSL \(Windows Subsystem for Linux\), on a Linux or macOS machine over SSH, or in a dev container/);
    assert.equal(agent.calls('actor'), 0, 'nothing started');
    assert.equal(fs.existsSync(path.join(repo, 'a.txt')), false);
    const listed = await runCli(['sessions', 'list', '--json'], { cwd: repo, env: windows });
    assert.equal(listed.code, 2);
    assert.deepEqual((JSON.parse(listed.stdout) as { error: { code: string; details: object } }).error.details, { platform: 'win32' });
    assert.equal((JSON.parse(listed.stdout) as { error: { code: string } }).error.code, 'platform_unsupported');
    for (const args of [['--version'], ['--help']]) assert.equal((await runCli(args, { cwd: repo, env: windows })).code, 0, args.join(' '));
  });

  it('prints the plan and runs nothing with --dry-run', async () => {
    const { repo, env, home, agent } = scriptedCliSetup({});
    const result = await runCli(['-p', 'x', '--dry-run', '--json-output', '--critic-model', 'opus'], { cwd: repo, env });
    assert.equal(result.code, 0, result.stderr);
    const plan = JSON.parse(result.stdout);
    assert.equal(plan.actor.agent, 'Command');
    assert.equal(plan.critic.model, 'opus');
    assert.equal(plan.repository, repo);
    assert.equal(agent.calls('actor'), 0);
    assert.deepEqual(sessionFiles(home.sessionsDir), []);
  });

  it("finds the project's codeloops.toml above a working folder reached through symbolic links, and runs its checks, an isolated one too, where they belong", async () => {
    const { repo, env } = scriptedCliSetup({ actor: [[{ write: { path: 'answer.txt', content: '42\n' } }]], critic: [[done()]] });
    writeFile(
      repo,
      'codeloops.toml',
      'max_iterations = 3\n[[checks]]\nname = "beside the file"\nrun = "test -f codeloops.toml"\n[[checks]]\nname = "isolated"\nrun = "test -f sub/here.txt"\nisolated = true\n',
    );
    writeFile(repo, 'sub/here.txt', 'here\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'a project file and a subfolder');
    // A link to the subfolder, outside the repository, and a link to that link.
    const links = tempDir('codeloops-links-');
    fs.symlinkSync(path.join(repo, 'sub'), path.join(links, 'sub-link'));
    fs.symlinkSync(path.join(links, 'sub-link'), path.join(links, 'link-to-link'));
    for (const link of ['sub-link', 'link-to-link']) {
      const plan = await runCli(['-d', path.join(links, link), '-p', 'x', '--dry-run', '--trust', '--json-output'], { cwd: links, env });
      assert.equal(plan.code, 0, plan.stderr);
      const planned = JSON.parse(plan.stdout) as { max_iterations: number; config_files: string[]; checks: { name: string; working_dir: string }[] };
      assert.equal(planned.max_iterations, 3, link);
      assert.ok(planned.config_files.includes(path.join(repo, 'codeloops.toml')), JSON.stringify(planned.config_files));
      assert.deepEqual(
        planned.checks.map((check) => [check.name, check.working_dir]),
        [
          ['beside the file', repo],
          ['isolated', repo],
        ],
      );
    }
    const run = await runCli(['-d', path.join(links, 'link-to-link'), '-p', 'write the answer', '--trust', '--json-output'], { cwd: links, env });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /check beside the file: passed/);
    assert.match(run.stderr, /check isolated \(in a clean worktree\): passed/);
    assert.equal(fs.readFileSync(path.join(repo, 'sub', 'answer.txt'), 'utf8'), '42\n');

    // A link that leads round in a loop is no folder, said so.
    fs.symlinkSync(path.join(links, 'loop-b'), path.join(links, 'loop-a'));
    fs.symlinkSync(path.join(links, 'loop-a'), path.join(links, 'loop-b'));
    const looped = await runCli(['-d', path.join(links, 'loop-a'), '-p', 'x', '--json-output'], { cwd: links, env });
    assert.equal(looped.code, 2, looped.stderr);
    assert.equal(JSON.parse(looped.stdout).error_code, 'directory_missing');
    assert.match(looped.stderr, /loop-a is a symbolic link that leads round in a loop/);
  });

  describe('bad input: a clear message, exit 2, and no session written', () => {
    it('a folder that is not a git repository', async () => {
      const { env, home } = scriptedCliSetup({});
      const result = await runCli(['-p', 'x', '--json-output'], { cwd: tempDir(), env });
      assert.equal(result.code, 2);
      assert.match(result.stderr, /is not inside a git repository\. .*Run "git init".*\nPass -d <folder>/s);
      const output = JSON.parse(result.stdout);
      assert.equal(output.error.includes('git init'), true);
      assert.equal(output.error_code, 'not_a_repository', 'a stable code, whatever the wording');
      assert.equal(output.session_id, null);
      assert.deepEqual(sessionFiles(home.sessionsDir), []);
    });

    it('invalid TOML in the project config', async () => {
      const { repo, env } = scriptedCliSetup({});
      writeFile(repo, 'codeloops.toml', 'agent = "claude"\n[actor\n');
      const result = await runCli(['-p', 'x'], { cwd: repo, env });
      assert.equal(result.code, 2);
      assert.match(result.stderr, new RegExp(`${path.join(repo, 'codeloops.toml').replace(/[.\\/]/g, '\\$&')}: invalid TOML at line 2`));
      assert.doesNotMatch(result.stderr, /at .*\.js:\d+/, 'no stack trace for a user error');
    });

    it('a missing agent binary', async () => {
      const { repo, env } = scriptedCliSetup({});
      const result = await runCli(['-p', 'x', '-a', 'gemini'], { cwd: repo, env: { ...env, PATH: path.dirname(process.execPath) } });
      assert.equal(result.code, 2);
      assert.match(result.stderr, /Gemini CLI: "gemini" was not found on PATH.*\[agents\.gemini\] path/);
    });

    it('a refusal on the --events stream: one typed run_refused event with its code and details, nothing else', async () => {
      const { repo, env, home } = scriptedCliSetup({});
      const result = await runCli(['-p', 'x', '-a', 'gemini', '--events', 'ndjson'], { cwd: repo, env: { ...env, PATH: path.dirname(process.execPath) } });
      assert.equal(result.code, 2);
      const events = result.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => runEventSchema.parse(JSON.parse(line)));
      assert.equal(events.length, 1);
      const [refused] = events;
      assert.ok(refused?.type === 'run_refused');
      assert.equal(refused.code, 'agent_missing');
      assert.equal(refused.details.agent, 'gemini');
      assert.match(refused.message, /"gemini" was not found on PATH/);
      assert.deepEqual(sessionFiles(home.sessionsDir), []);
    });

    it('no prompt at all, and an empty one', async () => {
      const { repo, env } = scriptedCliSetup({});
      const none = await runCli([], { cwd: repo, env });
      assert.equal(none.code, 2);
      assert.match(none.stderr, /No prompt: pass -p "<task>".*prompt\.md/);
      const empty = await runCli(['-p', '  '], { cwd: repo, env });
      assert.match(empty.stderr, /is empty/);
    });

    it('a prompt file holding a NUL byte (a binary file given by mistake), or a config whose model or check holds one: refused before any session', async () => {
      const { repo, env, home } = scriptedCliSetup({});
      writeFile(repo, 'task.bin', Buffer.from('Fix the bug\0\x01\x02'));
      const binary = await runCli(['--prompt-file', 'task.bin', '--json-output'], { cwd: repo, env });
      assert.equal(binary.code, 2, binary.stderr);
      assert.equal(JSON.parse(binary.stdout).error_code, 'usage');
      assert.match(binary.stderr, /task\.bin holds a NUL byte: a prompt is text/);
      const configFile = path.join(home.configHome, 'codeloops', 'config.toml');
      const config = fs.readFileSync(configFile, 'utf8');
      for (const [extra, key] of [
        ['\n[defaults.actor]\nmodel = "son\\u0000net"\n', /"defaults\.actor\.model": must not contain a NUL character/],
        ['\n[[defaults.checks]]\nname = "tests"\nrun = "npm test\\u0000"\n', /"defaults\.checks\.0\.run": must not contain a NUL character/],
      ] as const) {
        fs.writeFileSync(configFile, config + extra);
        const refused = await runCli(['-p', 'x', '--json-output'], { cwd: repo, env });
        assert.equal(refused.code, 2, refused.stderr);
        assert.equal(JSON.parse(refused.stdout).error_code, 'config_invalid');
        assert.match(JSON.parse(refused.stdout).error, key);
      }
      assert.deepEqual(sessionFiles(home.sessionsDir), []);
    });

    it('a loop already running in the repository, with the JSON still printed', async () => {
      const { repo, env } = scriptedCliSetup({});
      fs.writeFileSync(path.join(repo, '.git', 'codeloops.lock'), JSON.stringify({ pid: process.pid, startedAt: 'earlier' }));
      const result = await runCli(['-p', 'x', '--json-output'], { cwd: repo, env });
      assert.equal(result.code, 2);
      assert.match(result.stderr, /Another codeloops loop is running/);
      const output = JSON.parse(result.stdout);
      assert.match(output.error, /Another codeloops loop is running/);
      assert.equal(output.error_code, 'loop_running');
      assert.equal(output.error_details.pid, process.pid);
    });

    it('an unknown agent name or a bad number', async () => {
      const { repo, env } = scriptedCliSetup({});
      const agentResult = await runCli(['-p', 'x', '--actor-agent', 'aider'], { cwd: repo, env });
      assert.equal(agentResult.code, 2);
      assert.ok(agentResult.stderr.includes(`Allowed choices are ${AGENT_KINDS.join(', ')}.`), agentResult.stderr);
      for (const bad of ['lots', '99999999999999999999']) {
        const number = await runCli(['-p', 'x', '-n', bad], { cwd: repo, env });
        assert.equal(number.code, 2);
        assert.match(number.stderr, /expected a whole number from 0 \(no limit\) to 1,000,000/);
      }
    });
  });
});
