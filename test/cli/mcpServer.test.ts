import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { cliPath } from '../support/cliProcess.js';
import { startMcpServer, stopDetachedRunners, type McpSession } from '../support/mcpClient.js';
import { isRunning } from '../support/processes.js';
import { carryOnNaming, done, scriptedCliSetup } from '../support/scriptedAgent.js';
import { iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { createRepo, removeTempDirs, tempDir } from '../support/testEnvironment.js';
import { parseLockOwner } from '../../src/sessionFormat/loopLock.js';

const TOOL_NAMES = ['run_loop', 'get_session', 'wait_session', 'list_sessions', 'interrupt_session', 'review_session'];

/** The pid of the runner holding the repository's loop lock. */
function lockHolder(repo: string): number {
  return parseLockOwner(fs.readFileSync(path.join(repo, '.git', 'codeloops.lock'), 'utf8'))!.pid;
}

/** A process's group, from /proc (Linux). */
function processGroupOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

describe('codeloops mcp (the built CLI, driven by the MCP SDK client over stdio)', () => {
  const servers: McpSession[] = [];
  const repos: string[] = [];
  const serve = async (env: Record<string, string>): Promise<McpSession> => {
    const server = await startMcpServer(env);
    servers.push(server);
    return server;
  };
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
    await stopDetachedRunners(repos.splice(0));
  });
  after(removeTempDirs);

  it('lives in a bundle of its own: the runner every other command starts holds none of the SDK', () => {
    const dist = path.dirname(cliPath());
    assert.ok(fs.readFileSync(path.join(dist, 'mcp.js'), 'utf8').includes('notifications/progress'));
    assert.ok(
      !fs.readFileSync(path.join(dist, 'runner.js'), 'utf8').includes('notifications/progress'),
      'sessions list would read and compile it at every start',
    );
  });

  it('lists its six tools with their argument schemas, the read-only ones annotated as such', async () => {
    const { env } = scriptedCliSetup({});
    const { tools } = await (await serve(env)).client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      TOOL_NAMES,
    );
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    const properties = (name: string) => Object.keys(byName.get(name)!.inputSchema.properties ?? {});
    assert.deepEqual(properties('run_loop'), [
      'prompt',
      'working_dir',
      'actor_agent',
      'critic_agent',
      'actor_model',
      'critic_model',
      'max_iterations',
      'checks',
    ]);
    assert.deepEqual(byName.get('run_loop')!.inputSchema.required, ['prompt', 'working_dir']);
    assert.deepEqual(properties('wait_session'), ['session_id', 'timeout_secs']);
    assert.deepEqual((byName.get('wait_session')!.inputSchema.properties as Record<string, { maximum?: number }>).timeout_secs!.maximum, 3600);
    assert.deepEqual(properties('list_sessions'), ['project', 'limit']);
    assert.deepEqual(properties('review_session'), ['session_id', 'iteration']);
    assert.deepEqual(
      tools.filter((tool) => tool.annotations?.readOnlyHint === true).map((tool) => tool.name),
      ['get_session', 'wait_session', 'list_sessions', 'review_session'],
    );
    assert.equal(byName.get('run_loop')!.annotations?.destructiveHint, true);
    assert.equal(byName.get('interrupt_session')!.annotations?.readOnlyHint, false);
  });

  it('runs a loop in the background: its session id at once, progress while it runs, then the session, a list entry and an iteration’s hunks', async () => {
    const gate = path.join(tempDir('codeloops-gate-'), 'go');
    const waitForGate = { shell: ['sh', '-c', `while [ ! -e '${gate}' ]; do sleep 0.05; done`] };
    const { env, repo } = scriptedCliSetup({
      actor: [[waitForGate, { write: { path: 'hello.txt', content: 'Helo\n' } }], [{ write: { path: 'hello.txt', content: 'Hello\n' } }]],
      critic: [[carryOnNaming('hello.txt says Helo', ['typo'], { file: 'hello.txt', line: 1 })], [done('hello.txt says Hello')]],
    });
    repos.push(repo);
    const server = await serve(env);

    const started = await server.call('run_loop', { prompt: 'Write Hello into hello.txt', working_dir: repo, max_iterations: 4 });
    assert.equal(started.isError, false, JSON.stringify(started.content));
    const sessionId = started.content.session_id as string;
    assert.match(sessionId, /^\d{4}-\d\d-\d\dT[\d-]+Z_[0-9a-f]{6}$/);
    assert.equal(started.content.status, 'running', 'returned while its actor waits at the gate');

    const progress: Progress[] = [];
    const waited = await server.call('wait_session', { session_id: sessionId }, (report) => {
      progress.push(report);
      // The loop goes on only once a progress report said it runs.
      if (!fs.existsSync(gate)) fs.writeFileSync(gate, '');
    });
    assert.equal(waited.isError, false, JSON.stringify(waited.content));
    assert.equal(waited.content.status, 'ended');
    assert.equal(waited.content.outcome, 'success');
    assert.equal(waited.content.timed_out, false);
    assert.match(progress[0]!.message!, /^Running iteration 1 of 4\.$/);
    assert.equal(progress[0]!.total, 300, 'the default timeout');
    assert.ok(
      progress.every((report, index) => index === 0 || report.progress > progress[index - 1]!.progress),
      'progress grows',
    );
    assert.equal(fs.readFileSync(path.join(repo, 'hello.txt'), 'utf8'), 'Hello\n');

    const session = await server.call('get_session', { session_id: sessionId });
    const iterations = session.content.iterations as { iteration: number; decision: string; feedback: string | null; files_changed: number }[];
    assert.deepEqual(
      iterations.map(({ iteration, decision, feedback, files_changed }) => ({ iteration, decision, feedback, files_changed })),
      [
        { iteration: 1, decision: 'CONTINUE', feedback: 'hello.txt says Helo', files_changed: 1 },
        { iteration: 2, decision: 'DONE', feedback: null, files_changed: 1 },
      ],
    );
    assert.equal((session.content.end as { summary: string }).summary, 'hello.txt says Hello');
    assert.equal(session.content.working_dir, repo);
    assert.equal(
      fs.existsSync(path.join(env.XDG_DATA_HOME!, 'codeloops', 'sidecars', sessionId, 'runner.log')),
      true,
      "the runner's log is kept with its session",
    );

    const listed = await server.call('list_sessions', { project: path.basename(repo), limit: 5 });
    assert.deepEqual(
      (listed.content.sessions as { id: string; outcome: string }[]).map(({ id, outcome }) => ({ id, outcome })),
      [{ id: sessionId, outcome: 'success' }],
    );

    const review = await server.call('review_session', { session_id: sessionId, iteration: 1 });
    const reviewed = review.content as {
      iterations: { iteration: number; hunks: { number: number; file: string; text: string }[] }[];
      findings: { id: string }[];
    };
    assert.equal(reviewed.iterations[0]!.hunks[0]!.file, 'hello.txt');
    assert.match(reviewed.iterations[0]!.hunks[0]!.text, /\+Helo/);
    assert.deepEqual(
      reviewed.findings.map((finding) => finding.id),
      ['F1.1'],
    );
  });

  it("tells a session whose runner died as `crashed`, in the view the editor's language model tools give too, and lists whether each loop runs", async () => {
    const { env } = scriptedCliSetup({});
    const repo = createRepo({});
    const sessions = path.join(env.XDG_DATA_HOME!, 'codeloops', 'sessions');
    const id = writeSession(sessions, [startLine({ working_dir: repo, prompt: 'left behind' }), iterationLine(1)]);
    const server = await serve(env);
    const session = (await server.call('get_session', { session_id: id })).content;
    assert.deepEqual([session.status, session.outcome, session.end], ['crashed', null, null]);
    const listed = (await server.call('list_sessions', {})).content as { sessions: { id: string; outcome: string | null; running: boolean }[] };
    assert.deepEqual(
      listed.sessions.map(({ id: listedId, outcome, running }) => [listedId, outcome, running]),
      [[id, null, false]],
    );
  });

  it('leaves its loop running when the server exits; a later server finds it, refuses a second loop in its repository, and interrupts it', async () => {
    const { env, repo } = scriptedCliSetup({ actor: [[{ hang: true }]], critic: [[done()]] });
    repos.push(repo);
    const first = await serve(env);
    const started = await first.call('run_loop', { prompt: 'Take forever', working_dir: repo });
    assert.equal(started.isError, false, JSON.stringify(started.content));
    const sessionId = started.content.session_id as string;
    const runner = lockHolder(repo);
    assert.equal(processGroupOf(runner), runner, 'in a process group of its own: a Ctrl+C at the client’s terminal does not reach it');
    await first.close();
    assert.ok(isRunning(runner), 'the loop outlives the server that started it');

    const later = await serve(env);
    const found = await later.call('get_session', { session_id: sessionId });
    assert.equal(found.content.status, 'running');
    assert.equal(found.content.outcome, null);

    const second = await later.call('run_loop', { prompt: 'Another task', working_dir: repo });
    assert.equal(second.isError, true);
    assert.equal((second.content.error as { code: string }).code, 'loop_running');
    assert.match((second.content.error as { hint: string }).hint, /wait_session|interrupt_session/);

    const waited = await later.call('wait_session', { session_id: sessionId, timeout_secs: 1 });
    assert.equal(waited.content.timed_out, true);
    assert.equal(waited.content.status, 'running');

    const interrupted = await later.call('interrupt_session', { session_id: sessionId });
    assert.equal(interrupted.isError, false, JSON.stringify(interrupted.content));
    assert.equal(interrupted.content.interrupted, true);
    assert.equal(interrupted.content.status, 'ended');
    assert.equal(interrupted.content.outcome, 'interrupted');
    assert.ok(!fs.existsSync(path.join(repo, '.git', 'codeloops.lock')), 'the runner let go of the repository');

    const again = await later.call('interrupt_session', { session_id: sessionId });
    assert.equal(again.content.interrupted, false);
  });

  it('refuses bad input with the stable codes, in the CLI’s --json failure shape', async () => {
    const { env, repo } = scriptedCliSetup({ actor: [[{ write: { path: 'x.txt', content: 'x' } }]], critic: [[done()]] });
    const server = await serve(env);
    const failure = async (name: string, args: Record<string, unknown>) => {
      const result = await server.call(name, args);
      assert.equal(result.isError, true, `${name} ${JSON.stringify(args)}: ${JSON.stringify(result.content)}`);
      const error = result.content.error as { code: string; message: string; details: Record<string, unknown>; hint: string | null };
      assert.deepEqual(Object.keys(error), ['code', 'message', 'details', 'hint']);
      return error;
    };

    const notARepository = tempDir('codeloops-plain-');
    assert.equal((await failure('run_loop', { prompt: 'x', working_dir: notARepository })).code, 'not_a_repository');
    assert.equal((await failure('run_loop', { prompt: 'x', working_dir: path.join(notARepository, 'missing') })).code, 'directory_missing');
    const relative = await failure('run_loop', { prompt: 'x', working_dir: 'some/folder' });
    assert.equal(relative.code, 'usage');
    assert.match(relative.message, /absolute/);
    const unknown = await failure('get_session', { session_id: '2020-01-01T00-00-00Z_abcdef' });
    assert.equal(unknown.code, 'session_not_found');
    assert.match(unknown.hint!, /list_sessions/);
    assert.equal((await failure('wait_session', { session_id: 'nothing-like-it' })).code, 'session_not_found');
    assert.equal((await failure('interrupt_session', { session_id: 'nothing-like-it' })).code, 'session_not_found');
    const tooLong = await failure('wait_session', { session_id: 'latest', timeout_secs: 3601 });
    assert.equal(tooLong.code, 'usage');
    assert.match(tooLong.message, /timeout_secs/);
    assert.equal((await failure('run_loop', { prompt: 'x', working_dir: repo, actor_agent: 'nobody' })).code, 'usage');

    const untrusted = createRepo({ files: { 'codeloops.toml': '[[checks]]\nname = "tests"\nrun = "./run-tests.sh"\n' } });
    const refused = await failure('run_loop', { prompt: 'x', working_dir: untrusted });
    assert.equal(refused.code, 'project_untrusted');
    assert.equal(refused.details.file, path.join(untrusted, 'codeloops.toml'));
    assert.match(refused.hint!, /codeloops trust/);
    assert.ok(
      !fs.existsSync(path.join(env.XDG_DATA_HOME!, 'codeloops', 'sessions')) ||
        fs.readdirSync(path.join(env.XDG_DATA_HOME!, 'codeloops', 'sessions')).length === 0,
    );
  });

  it('takes a prompt of any size and any text (3 MB, emoji, a leading "-") through a private file, gone once the loop has it', async () => {
    const { env, repo, agent } = scriptedCliSetup({ actor: [[{ write: { path: 'done.txt', content: 'ok\n' } }]], critic: [[done()]] });
    repos.push(repo);
    const server = await serve(env);
    const prompt = `--help me 🙂 with this\n${'Line of the task. 🧪\n'.repeat(150_000)}THE END`;
    assert.ok(Buffer.byteLength(prompt) > 3_000_000);
    const started = await server.call('run_loop', { prompt, working_dir: repo, max_iterations: 1 });
    assert.equal(started.isError, false, JSON.stringify(started.content).slice(0, 2000));
    const waited = await server.call('wait_session', { session_id: started.content.session_id as string });
    assert.equal(waited.content.outcome, 'success', JSON.stringify(waited.content).slice(0, 2000));
    assert.ok(agent.prompt('actor', 1).includes(prompt), 'the actor got the whole task');
    const mcpFolder = path.join(env.XDG_DATA_HOME!, 'codeloops', 'mcp');
    assert.equal((fs.statSync(mcpFolder).mode & 0o777).toString(8), '700');
    assert.deepEqual(
      fs.readdirSync(mcpFolder).filter((name) => name.startsWith('prompt-')),
      [],
      'the prompt file went',
    );
  });

  it('refuses a NUL in the prompt, a model or a check, a blank prompt, and a model, a check or a working_dir longer than an argument may be, as usage', async () => {
    const { env, repo } = scriptedCliSetup({ actor: [[{ write: { path: 'x.txt', content: 'x' } }]], critic: [[done()]] });
    const server = await serve(env);
    for (const [args, problem] of [
      [{ prompt: 'Fix it\0now' }, /prompt: must not contain a NUL character/],
      [{ prompt: 'Fix it', actor_model: 'son\0net' }, /actor_model: must not contain a NUL character/],
      [{ prompt: 'Fix it', checks: ['npm test', 'true\0'] }, /checks\.1: must not contain a NUL character/],
      [{ prompt: ' \n\t' }, /prompt: must say what to do/],
      [{ prompt: 'Fix it', critic_model: 'm'.repeat(5_000) }, /critic_model: Too big/],
      [{ prompt: 'Fix it', working_dir: `/${'a'.repeat(200_000)}` }, /working_dir: Too big/],
    ] as const) {
      const result = await server.call('run_loop', { working_dir: repo, ...args });
      assert.equal(result.isError, true, JSON.stringify(args));
      const error = result.content.error as { code: string; message: string };
      assert.equal(error.code, 'usage', `${JSON.stringify(args).slice(0, 100)}: ${error.message}`);
      assert.match(error.message, problem);
    }
    assert.ok(
      !fs.existsSync(path.join(env.XDG_DATA_HOME!, 'codeloops', 'sessions')) ||
        fs.readdirSync(path.join(env.XDG_DATA_HOME!, 'codeloops', 'sessions')).length === 0,
    );
  });

  it('returns its own session while another loop of the same prompt, in another repository, starts meanwhile', async () => {
    const { env, repo: first } = scriptedCliSetup({ actor: [[{ hang: true }]], critic: [[done()]] });
    const second = createRepo({ files: { 'README.md': '# other\n' } });
    repos.push(first, second);
    // The runner for the second repository is held before it reads anything, until the gate opens: a slow start.
    const gates = tempDir('codeloops-gate-');
    const preload = path.join(gates, 'hold.cjs');
    fs.writeFileSync(
      preload,
      `const fs = require('node:fs');\n` +
        `if (process.argv.includes(${JSON.stringify(`--working-dir=${second}`)})) {\n` +
        `  fs.writeFileSync(${JSON.stringify(path.join(gates, 'held'))}, '');\n` +
        `  while (!fs.existsSync(${JSON.stringify(path.join(gates, 'open'))})) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);\n` +
        `}\n`,
    );
    const server = await serve({ ...env, NODE_OPTIONS: `--require ${preload}` });
    const prompt = 'The same task, twice';

    const slow = server.call('run_loop', { prompt, working_dir: second });
    await waitFor(() => fs.existsSync(path.join(gates, 'held')));
    const fast = await server.call('run_loop', { prompt, working_dir: first });
    assert.equal(fast.isError, false, JSON.stringify(fast.content));
    assert.equal(fast.content.working_dir, first);
    fs.writeFileSync(path.join(gates, 'open'), '');
    const own = await slow;
    assert.equal(own.isError, false, JSON.stringify(own.content));
    assert.notEqual(own.content.session_id, fast.content.session_id, 'not the other loop’s session');
    assert.equal(own.content.working_dir, second);
  });
});

async function waitFor(test: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
