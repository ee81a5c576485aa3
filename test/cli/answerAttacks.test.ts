import assert from 'node:assert/strict';
import { CLI_ANSWERS } from '../../src/sessionFormat/cliAnswerIndex.js';
import { readCliAnswer } from '../../src/sessionFormat/cliAnswerReading.js';
import { parseRunEvent } from '../../src/sessionFormat/runEvents.js';
import { runCli } from '../support/cliProcess.js';
import { stopRunners } from '../support/processes.js';
import { createRepo, isolateHome, removeTempDirs } from '../support/testEnvironment.js';

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

  it('--dry-run --json-output with a bad flag (the editor\'s plan) answers the refusal the plan reader reads', async () => {
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
      const events = result.stdout.split('\n').filter(Boolean).map((line) => parseRunEvent(line));
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
});
