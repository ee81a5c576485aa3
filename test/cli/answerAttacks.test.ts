import assert from 'node:assert/strict';
import { CLI_ANSWERS } from '../../src/sessionFormat/cliAnswerIndex.js';
import { readCliAnswer } from '../../src/sessionFormat/cliAnswerReading.js';
import { parseRunEvent } from '../../src/sessionFormat/runEvents.js';
import { runCli, startCli } from '../support/cliProcess.js';
import { startMcpServer, stopDetachedRunners } from '../support/mcpClient.js';
import { stopRunners } from '../support/processes.js';
import { configureScriptedAgent, done } from '../support/scriptedAgent.js';
import { createRepo, isolateHome, removeTempDirs, tempDir } from '../support/testEnvironment.js';
import { timelineEntrySchema } from '../../src/sessionFormat/timelineEntries.js';
import { failureAnswerSchema } from '../../src/sessionFormat/failures.js';

/** Where `raw` has a key that `parsed` (what the declaration kept of it) lacks: a field printed but never declared. */
function undeclaredKeys(raw: unknown, parsed: unknown, at = '$'): string[] {
  if (Array.isArray(raw) && Array.isArray(parsed)) return raw.flatMap((item, index) => undeclaredKeys(item, parsed[index], `${at}[${index}]`));
  if (typeof raw !== 'object' || raw === null || typeof parsed !== 'object' || parsed === null) return [];
  return Object.entries(raw).flatMap(([key, value]) =>
    key in parsed ? undeclaredKeys(value, (parsed as Record<string, unknown>)[key], `${at}.${key}`) : [`${at}.${key}`],
  );
}

/** One JSON value through a schema, every field of it declared. */
function declared<T>(schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error?: unknown } }, text: string, what: string): T {
  const raw: unknown = JSON.parse(text);
  const parsed = schema.safeParse(raw);
  assert.ok(
    parsed.success,
    `${what}: not its declared shape: ${text.slice(0, 1500)}\n${JSON.stringify((parsed as { error?: unknown }).error)?.slice(0, 1500)}`,
  );
  assert.deepEqual(undeclaredKeys(raw, parsed.data), [], `${what} printed fields its declaration lacks`);
  return parsed.data;
}

/** A command's --json answer on stdout: its declared answer, exit code aside. */
function answered<C extends keyof typeof CLI_ANSWERS>(command: C, result: { stdout: string; stderr: string }) {
  assert.ok(result.stdout.trim(), `${command}: nothing on stdout\n${result.stderr}`);
  return declared(CLI_ANSWERS[command].schema as never, result.stdout, command) as unknown;
}

/** A command line commander refuses while parsing, read as each machine reader reads it: the usage failure in its envelope, never silence. */
describe("the CLI's machine answers under attack: command lines refused while parsing", function () {
  this.timeout(60_000);
  afterEach(stopRunners);
  after(removeTempDirs);

  function setup() {
    const home = isolateHome();
    home.restore();
    return { repo: createRepo({ files: { 'README.md': '# x\n' } }), env: home.env };
  }

  it('--json: an unknown option is the usage envelope (sessions show --json --bogus)', async () => {
    const { repo, env } = setup();
    const result = await runCli(['sessions', 'show', '--json', '--bogus'], { cwd: repo, env });
    assert.equal(result.code, 2);
    const read = readCliAnswer(CLI_ANSWERS['sessions show'].schema, result.stdout);
    assert.ok(read && !read.ok && read.failure.code === 'usage', result.stdout);
  });

  for (const args of [
    ['--json-output', '--max-iterations', 'abc', '-p', 'x'],
    ['run', '--json-output', '--bogus', '-p', 'x'],
    ['run', '--json-output', '--actor-agent', 'bogus', '-p', 'x'],
  ]) {
    it(`--json-output: ${args.join(' ')} answers the refused run, failure usage`, async () => {
      const { repo, env } = setup();
      const result = await runCli(args, { cwd: repo, env });
      assert.equal(result.code, 2);
      const read = readCliAnswer(CLI_ANSWERS.run.schema, result.stdout);
      assert.ok(read && !read.ok, `nothing a reader can read on stdout: ${JSON.stringify(result.stdout)}`);
      assert.equal(read.failure.code, 'usage');
      assert.equal(JSON.parse(result.stdout).error_code, 'usage');
    });
  }

  it("--dry-run --json-output with a bad flag (the editor's plan) answers the refusal the plan reader reads", async () => {
    const { repo, env } = setup();
    const result = await runCli(['run', '--dry-run', '--json-output', '--max-iterations', '2.5', '-p', 'x'], { cwd: repo, env });
    const read = readCliAnswer(CLI_ANSWERS['run --dry-run'].schema, result.stdout);
    assert.ok(read && !read.ok && read.failure.code === 'usage', JSON.stringify(result.stdout));
  });

  for (const args of [
    ['run', '--events', 'ndjson', '--actor-agent', 'bogus', '-p', 'x'],
    ['run', '--events=ndjson', '--max-iterations', '-1', '-p', 'x'],
    ['resume', '--events', 'ndjson', '--bogus', '--', 'some-session'],
  ]) {
    it(`--events ndjson: ${args.join(' ')} streams run_refused, failure usage`, async () => {
      const { repo, env } = setup();
      const result = await runCli(args, { cwd: repo, env });
      assert.equal(result.code, 2);
      const events = result.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => parseRunEvent(line));
      assert.equal(events.length, 1, JSON.stringify(result.stdout));
      const event = events[0];
      assert.ok(event?.type === 'run_refused' && event.failure?.code === 'usage' && event.code === 'usage', JSON.stringify(result.stdout));
    });
  }

  it('an operand after "--" that looks like a flag is never parsed as one', async () => {
    const { repo, env } = setup();
    const result = await runCli(['resume', '--json-output', '--', '--json'], { cwd: repo, env });
    const read = readCliAnswer(CLI_ANSWERS.resume.schema, result.stdout);
    assert.ok(read && !read.ok && read.failure.code === 'session_not_found', result.stdout);
    assert.equal(read.failure.details.id, '--json');
  });

  it('on a repository with hostile file names (unicode, spaces, leading dashes, a newline), every answer is its declaration, no field undeclared', async () => {
    const home = isolateHome();
    home.restore();
    const odd = { 'ünï cödé 文件.txt': 'u\n', '-rf': 'dash\n', '--json': 'flag\n', 'sp ace/a b.txt': 's\n', 'new\nline.txt': 'n\n', 'emoji 🧨.md': 'e\n' };
    const repo = createRepo({ files: odd });
    configureScriptedAgent(home.configHome, {
      actor: [
        [
          { write: { path: 'ünï cödé 文件.txt', content: 'changed\n' } },
          { write: { path: '-n', content: 'new\n' } },
          { write: { path: 'tab\there.txt', content: 't\n' } },
          { delete: '--json' },
          { write: { path: 'new\nline.txt', content: 'n2\n' } },
        ],
      ],
      critic: [[done('made it', 0.9)]],
    });
    const env = home.env;
    const run = (args: string[]) => runCli(args, { cwd: repo, env });
    const outcome = answered('run', await run(['--json-output', '-p', '-p --json 🧨\nline'])) as { session_id: string; status: string; failure: unknown };
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.failure, null);
    const id = outcome.session_id;
    answered('sessions list', await run(['sessions', 'list', '--json']));
    answered('sessions show', await run(['sessions', 'show', '--json', '--', id]));
    answered('sessions stats', await run(['sessions', 'stats', '--json']));
    answered('review', await run(['review', id, '--json']));
    answered('forecast', await run(['forecast', '--json']));
    answered('doctor', await run(['doctor', '--json']));
    answered('run --dry-run', await run(['--dry-run', '--json-output', '-p', '--json']));

    // sessions replay --json: NDJSON, each line an entry (or, last, the failure envelope).
    const replay = await run(['sessions', 'replay', id, '--json']);
    const lines = replay.stdout.split('\n').filter(Boolean);
    assert.ok(lines.length > 3, replay.stdout);
    for (const [index, line] of lines.entries()) declared(timelineEntrySchema, line, `sessions replay line ${index + 1}`);
    const entries = lines.join('\n');
    for (const name of ['ünï cödé 文件.txt', '-n', 'tab\there.txt', '--json', 'new\nline.txt'])
      assert.ok(entries.includes(JSON.stringify(name).slice(1, -1)), `replay lost ${JSON.stringify(name)}`);
    // One entry read the way readCliAnswer reads one answer: ndjson is read a line at a time.
    assert.ok(readCliAnswer(CLI_ANSWERS['sessions replay'].schema, lines[0]!)?.ok);

    answered('rollback', await run(['rollback', id, '--dry-run', '--json']));
    answered('rollback', await run(['rollback', id, '--json']));
    answered('rollback', await run(['rollback', id, '--undo', '--json']));
    const bundle = `${tempDir('bundle-')}/b.tar.gz`;
    answered('sessions export', await run(['sessions', 'export', id, '-o', bundle, '--json']));
    const again = await run(['sessions', 'import', bundle, '--json']);
    const read = readCliAnswer(CLI_ANSWERS['sessions import'].schema, again.stdout);
    assert.ok(read, again.stdout + again.stderr);
    if (!read.ok) declared(failureAnswerSchema, again.stdout, 'sessions import failure');
    answered('sessions delete', await run(['sessions', 'delete', id, '--json']));
    const gone = await run(['sessions', 'replay', id, '--json']);
    const failure = readCliAnswer(CLI_ANSWERS['sessions replay'].schema, gone.stdout);
    assert.ok(failure && !failure.ok && failure.failure.code === 'session_not_found', gone.stdout);
  });

  it('--json-output of a loop that failed with a code fills the envelope, hint included; of one interrupted, failure is null', async () => {
    const home = isolateHome();
    home.restore();
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    configureScriptedAgent(home.configHome, { actor: [[{ print: 'cannot' }, { exit: 3 }]], critic: [[done('no', 0.1)]] });
    const failed = await runCli(['--json-output', '-p', 'x'], { cwd: repo, env: home.env });
    const outcome = answered('run', failed) as { status: string; failure: { code: string; hint: string | null } | null; error_code: string | null };
    assert.equal(outcome.status, 'failed', failed.stdout);
    assert.ok(outcome.failure, `a failed run's --json-output has no failure: ${failed.stdout}`);
    assert.equal(outcome.failure.code, outcome.error_code);
    assert.ok('hint' in outcome.failure);

    configureScriptedAgent(home.configHome, { actor: [[{ print: 'working' }, { sleep: 60_000 }]], critic: [[done()]] });
    const started = startCli(['--json-output', '-p', 'x'], { cwd: repo, env: home.env });
    await started.waitForStderr(/working|actor/i, 30_000).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    started.child.kill('SIGINT');
    const interrupted = await started.done;
    const stopped = answered('run', interrupted) as { status: string; failure: unknown };
    assert.equal(stopped.status, 'interrupted', interrupted.stdout);
    assert.equal(stopped.failure, null);
  });

  it('the MCP server answers every failure in the one envelope, with the code a caller acts on (a NUL in an argument is usage, not internal)', async () => {
    const home = isolateHome();
    home.restore();
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    configureScriptedAgent(home.configHome, { actor: [[{ sleep: 60_000 }]], critic: [[done()]] });
    const server = await startMcpServer(home.env);
    try {
      const envelope = (result: { isError: boolean; content: Record<string, unknown> }, code: string) => {
        assert.ok(result.isError, JSON.stringify(result));
        const failure = declared(failureAnswerSchema, JSON.stringify(result.content), 'an MCP failure');
        assert.equal(failure.failure.code, code, JSON.stringify(result.content));
      };
      envelope(await server.call('get_session', { session_id: 'nope' }), 'session_not_found');
      envelope(await server.call('get_session', { session_id: 42 }), 'usage');
      envelope(await server.call('no_such_tool', {}), 'usage');
      envelope(await server.call('run_loop', { prompt: 'x', working_dir: repo, checks: ['true\u0000; rm -rf /'] }), 'usage');
      envelope(await server.call('run_loop', { prompt: 'x', working_dir: repo, actor_model: 'm\u0000' }), 'usage');
    } finally {
      await server.close();
      await stopDetachedRunners([repo]);
    }
  });
});
