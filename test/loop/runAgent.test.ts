import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { adapterFor } from '../../src/agents/adapterRegistry.js';
import { AgentNotFoundError, resolveAgentProgram } from '../../src/agents/agentProgram.js';
import type { AgentEvent } from '../../src/sessionFormat/agentEvents.js';
import { runAgent, type AgentLaunch } from '../../src/agents/runAgent.js';
import type { RoleSettings } from '../../src/config/runSettings.js';
import { scriptedAgent, type AgentScript } from '../support/scriptedAgent.js';
import { isRunning, waitUntilGone } from '../support/processes.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

function launchFor(script: AgentScript, overrides: Partial<AgentLaunch> = {}) {
  const agent = scriptedAgent(script);
  const [program, ...leadingArgs] = agent.command as [string, ...string[]];
  const launch: AgentLaunch = {
    adapter: adapterFor('command'),
    program: { program, leadingArgs },
    extraArgs: [],
    env: agent.env,
    workingDir: tempDir(),
    timeoutSecs: 30,
    ...overrides,
  };
  return { agent, launch };
}

const request = (prompt: string) => ({ role: 'actor' as const, prompt, model: null, resumeSessionId: null });

describe('running an agent process', () => {
  after(removeTempDirs);

  it('gives the prompt on stdin untouched, even one that starts with "-" and holds emoji, in a clean environment', async () => {
    const { agent, launch } = launchFor({ actor: [[{ print: 'hello from the agent' }]] });
    process.env.CLAUDECODE = '1';
    // A runner started from a git hook has git's location variables: the agent's git must not follow them elsewhere.
    process.env.GIT_DIR = '/elsewhere/.git';
    process.env.GIT_WORK_TREE = '/elsewhere';
    const rawPath = path.join(tempDir(), 'raw.stdout');
    const events: AgentEvent[] = [];
    try {
      const result = await runAgent(launch, request('--help me 🎉 "quoted" $(rm -rf /)'), {
        rawStdoutPath: rawPath,
        onEvent: (event) => events.push(event),
        runEnv: { CODELOOPS_ITERATION: '3' },
      });
      assert.equal(result.succeeded, true);
      assert.equal(result.exitCode, 0);
      assert.equal(result.transcript, 'hello from the agent\n');
      assert.deepEqual(events, [{ kind: 'text', text: 'hello from the agent' }]);
    } finally {
      delete process.env.CLAUDECODE;
      delete process.env.GIT_DIR;
      delete process.env.GIT_WORK_TREE;
    }
    assert.equal(agent.prompt('actor', 1), '--help me 🎉 "quoted" $(rm -rf /)');
    const env = agent.envSeen('actor', 1);
    assert.equal(env.CLAUDECODE, undefined, 'CLAUDECODE is stripped');
    assert.equal(env.GIT_DIR, undefined, "git's location variables are stripped");
    assert.equal(env.GIT_WORK_TREE, undefined);
    assert.equal(env.NO_COLOR, '1');
    assert.equal(env.CODELOOPS_ITERATION, '3');
    assert.equal(fs.readFileSync(rawPath, 'utf8'), 'hello from the agent\n', 'raw stdout is kept');
  });

  it('reports a non-zero exit as a failure with its stderr', async () => {
    const { launch } = launchFor({ actor: [[{ stderr: 'boom: config broken' }, { exit: 3 }]] });
    const result = await runAgent(launch, request('x'));
    assert.equal(result.succeeded, false);
    assert.equal(result.exitCode, 3);
    assert.match(result.stderr, /boom: config broken/);
    assert.match(result.failureReason!, /exited with code 3/);
  });

  it('decides success from the structured stream, not the exit code: garbage from a "claude" is a failure', async () => {
    const { launch } = launchFor({ actor: [[{ print: 'Segmentation fault? \u0007\u001b[31m not json {{{' }, { exit: 0 }]] }, { adapter: adapterFor('claude') });
    const result = await runAgent(launch, request('x'));
    assert.equal(result.exitCode, 0);
    assert.equal(result.succeeded, false);
    assert.match(result.failureReason!, /without a final result event/);
    assert.match(result.transcript, /not json/);
  });

  it('stops a hung agent at its timeout, killing the whole process group', async () => {
    const { agent, launch } = launchFor({ actor: [[{ spawnChild: true }, { print: 'started' }, { hang: true }]] }, { timeoutSecs: 1 });
    const result = await runAgent(launch, request('x'));
    assert.equal(result.timedOut, true);
    assert.equal(result.succeeded, false);
    assert.match(result.failureReason!, /timed out after 1 s/);
    assert.equal(result.exitCode, 137, 'SIGINT and SIGTERM were ignored, SIGKILL ended it');
    const grandchild = Number(fs.readFileSync(path.join(agent.dir, 'grandchild.pid'), 'utf8'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(!isRunning(grandchild), 'the agent’s own child process was killed too');
  });

  it('stops at once when interrupted', async () => {
    const { launch } = launchFor({ actor: [[{ print: 'working' }, { sleep: 60_000 }]] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = performance.now();
    const result = await runAgent(launch, request('x'), { signal: controller.signal });
    assert.equal(result.interrupted, true);
    assert.ok(performance.now() - started < 3000);
    assert.equal(result.transcript, 'working\n');
  });

  it('kills what an agent left running in its group when it exits normally, its output detached', async () => {
    // The background process holds no pipe of ours: only the group kill after the exit can end it.
    const { agent, launch } = launchFor({ actor: [[{ spawnChild: true }, { print: 'done, leaving a daemon behind' }]] });
    const result = await runAgent(launch, request('x'));
    assert.equal(result.succeeded, true);
    assert.equal(result.exitCode, 0);
    const grandchild = Number(fs.readFileSync(path.join(agent.dir, 'grandchild.pid'), 'utf8'));
    assert.ok(await waitUntilGone(grandchild), 'the background process was killed with the group');
  });

  it('stops the agent’s children too when interrupted, not only the agent', async () => {
    const { agent, launch } = launchFor({ actor: [[{ spawnChild: true }, { print: 'started' }, { sleep: 60_000 }]] });
    const controller = new AbortController();
    const result = await runAgent(launch, request('x'), { signal: controller.signal, onEvent: (event) => event.kind === 'text' && controller.abort() });
    assert.equal(result.interrupted, true);
    const grandchild = Number(fs.readFileSync(path.join(agent.dir, 'grandchild.pid'), 'utf8'));
    assert.ok(await waitUntilGone(Number(agent.envSeen('actor', 1).pid)), 'the agent is gone');
    assert.ok(await waitUntilGone(grandchild), 'and so is the process it started');
  });

  it('tells a recorder of its process group while it runs (the loop lock keeps it)', async () => {
    const { agent, launch } = launchFor({ actor: [[{ print: 'x' }]] });
    const seen: string[] = [];
    await runAgent(launch, request('x'), { groups: { add: (pid) => seen.push(`+${pid}`), remove: (pid) => seen.push(`-${pid}`) } });
    const pid = Number(agent.envSeen('actor', 1).pid);
    assert.deepEqual(seen, [`+${pid}`, `-${pid}`], 'the agent leads its own group');
  });

  it('does not wait for a background process that keeps stdout open after the agent exits', async () => {
    const script = `require('child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: ['ignore', 'inherit', 'inherit'] }).unref(); console.log('bye');`;
    const launch: AgentLaunch = {
      adapter: adapterFor('command'),
      program: { program: process.execPath, leadingArgs: ['-e', script] },
      extraArgs: [],
      env: {},
      workingDir: tempDir(),
      timeoutSecs: 30,
    };
    const started = performance.now();
    const result = await runAgent(launch, request('x'));
    assert.equal(result.succeeded, true);
    assert.equal(result.transcript, 'bye\n');
    assert.ok(performance.now() - started < 6000);
  });

  it('keeps memory bounded on megabytes of output: head and tail of the transcript', async () => {
    const { launch } = launchFor({ actor: [[{ print: 'FIRST LINE' }, { flood: 24 * 1024 * 1024 }, { print: 'LAST LINE' }]] });
    const result = await runAgent(launch, request('x'));
    assert.equal(result.succeeded, true);
    assert.ok(result.transcript.startsWith('FIRST LINE\n'));
    assert.ok(result.transcript.endsWith('LAST LINE\n'));
    assert.match(result.transcript, /characters omitted/);
    assert.ok(result.transcript.length < 450_000);
  });

  it("records a death by signal with the shell's exit code", async () => {
    const { launch } = launchFor({ actor: [[{ print: 'about to crash' }, { kill: 'SIGABRT' }]] });
    const result = await runAgent(launch, request('x'));
    assert.equal(result.exitCode, 134);
    assert.equal(result.signal, 'SIGABRT');
    assert.equal(result.succeeded, false);
    assert.match(result.failureReason!, /killed by SIGABRT/);
  });

  it('goes on without its raw log when the log cannot be written, and says so', async () => {
    const { launch } = launchFor({ actor: [[{ flood: 2 * 1024 * 1024 }, { print: 'done' }]] });
    const result = await runAgent(launch, request('x'), { rawStdoutPath: path.join(tempDir(), 'missing-folder', 'raw.stdout') });
    assert.equal(result.succeeded, true);
    assert.ok(result.transcript.endsWith('done\n'));
    assert.match(result.stderr, /the raw output log stopped: ENOENT/);
  });

  it('keeps the raw log byte for byte, invalid UTF-8 included', async () => {
    const bytes = Buffer.from([0x68, 0x69, 0xff, 0xfe, 0x0a, 0xf0, 0x9f, 0x8e, 0x89, 0x0a]);
    const launch: AgentLaunch = {
      adapter: adapterFor('command'),
      program: { program: process.execPath, leadingArgs: ['-e', `process.stdout.write(Buffer.from(${JSON.stringify([...bytes])}))`] },
      extraArgs: [],
      env: {},
      workingDir: tempDir(),
      timeoutSecs: 30,
    };
    const rawPath = path.join(tempDir(), 'raw.stdout');
    const result = await runAgent(launch, request('x'), { rawStdoutPath: rawPath });
    assert.ok(fs.readFileSync(rawPath).equals(bytes));
    assert.match(result.transcript, /🎉/);
  });

  it('refuses an argument the kernel would reject, with a clear reason, before it opens anything', async () => {
    const { launch } = launchFor({}, { adapter: adapterFor('cursor') });
    const folder = tempDir();
    const rawPath = path.join(folder, 'raw.stdout');
    const result = await runAgent(launch, request('x'.repeat(200_000)), { rawStdoutPath: rawPath });
    assert.equal(result.succeeded, false);
    assert.match(result.failureReason!, /takes its prompt as an argument, and this one is 200,000 bytes/);
    // File opens run on libuv's threads in the order asked: once later requests are answered, an open asked before has run.
    await Promise.all(Array.from({ length: 16 }, () => fs.promises.stat(folder)));
    assert.equal(fs.existsSync(rawPath), false, 'no empty raw log is left behind');
    const open = fs.readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`) === rawPath;
      } catch {
        return false; // closed meanwhile
      }
    });
    assert.deepEqual(open, [], 'no file descriptor is left open on it');
  });

  it('puts config’s extra arguments before what must come last: `codex exec … resume <id> -`', async () => {
    const { agent, launch } = launchFor({ actor: [[{ print: 'ok' }]] }, { adapter: adapterFor('codex'), extraArgs: ['-c', 'model_reasoning_effort="high"'] });
    await runAgent(launch, { ...request('go on'), resumeSessionId: 'thread-1' });
    assert.deepEqual(agent.argsSeen('actor', 1), [
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--sandbox',
      'workspace-write',
      '-c',
      'model_reasoning_effort="high"',
      'resume',
      'thread-1',
      '-',
    ]);
  });

  it('says which binary is missing and which setting points to it', () => {
    const settings: RoleSettings = {
      agent: 'claude',
      model: null,
      timeoutSecs: 10,
      extraArgs: [],
      env: {},
      command: null,
      binaryPath: null,
      binarySetting: '[agents.claude] path',
    };
    assert.throws(
      () => resolveAgentProgram(adapterFor('claude'), settings, '/', { PATH: tempDir() }),
      (error: Error) =>
        error instanceof AgentNotFoundError &&
        /"claude" was not found on PATH/.test(error.message) &&
        /\[agents\.claude\] path/.test(error.message) &&
        /npm install -g @anthropic-ai\/claude-code/.test(error.message),
    );
    assert.throws(
      () =>
        resolveAgentProgram(
          adapterFor('opencode'),
          { ...settings, binaryPath: '/nowhere/opencode', binarySetting: '[agents.opencode] path in /etc/x.toml' },
          '/',
          {},
        ),
      /OpenCode: \/nowhere\/opencode does not exist \(set by \[agents\.opencode\] path in \/etc\/x\.toml\)/,
    );
    assert.throws(() => resolveAgentProgram(adapterFor('command'), settings, '/', {}), /no program is configured for the "command" agent/);
  });
});
