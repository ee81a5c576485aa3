import assert from 'node:assert/strict';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.js';
import { CLI_ANSWERS, type CliAnswer, type CliCommand } from '../../src/sessionFormat/cliAnswerIndex.js';
import { readCliAnswer, type AnswerSchema } from '../../src/sessionFormat/cliAnswerReading.js';
import { runCli } from '../support/cliProcess.js';
import { stopRunners } from '../support/processes.js';
import { done, scriptedCliSetup } from '../support/scriptedAgent.js';
import { git, removeTempDirs, tempDir } from '../support/testEnvironment.js';

/** Where `raw` has a key that `parsed` (what the declaration kept of it) lacks: a field printed but never declared. */
function undeclaredKeys(raw: unknown, parsed: unknown, at = '$'): string[] {
  if (Array.isArray(raw) && Array.isArray(parsed)) return raw.flatMap((item, index) => undeclaredKeys(item, parsed[index], `${at}[${index}]`));
  if (typeof raw !== 'object' || raw === null || typeof parsed !== 'object' || parsed === null) return [];
  return Object.entries(raw).flatMap(([key, value]) =>
    key in parsed ? undeclaredKeys(value, (parsed as Record<string, unknown>)[key], `${at}.${key}`) : [`${at}.${key}`],
  );
}

/** A command's stdout, read through the contract as the editor reads it: its answer, every field of it declared. */
function answerOf<C extends CliCommand>(command: C, result: { code: number | null; stdout: string; stderr: string }) {
  const read = readCliAnswer(CLI_ANSWERS[command].schema as AnswerSchema<CliAnswer<C>>, result.stdout);
  assert.ok(read, `"${command}" answered what its declaration does not read:\n${result.stdout.slice(0, 2000)}\n${result.stderr}`);
  assert.ok(read.ok, `"${command}" failed: ${JSON.stringify(read)}\n${result.stderr}`);
  const parsed = CLI_ANSWERS[command].schema.parse(JSON.parse(result.stdout));
  assert.deepEqual(undeclaredKeys(JSON.parse(result.stdout), parsed), [], `"${command}" printed fields its declaration lacks`);
  return read.answer;
}

/** Every command path of the CLI that answers in JSON (`--json`, or `--json-output` for a run). */
function commandsAnsweringJson(program: Command, prefix = ''): string[] {
  return program.commands.flatMap((command) => {
    const name = `${prefix}${command.name()}`;
    const answers = command.options.some((option) => option.long === '--json' || option.long === '--json-output');
    return [...(answers ? [name] : []), ...commandsAnsweringJson(command, `${name} `)];
  });
}

describe("the CLI's machine answers, each declared once (sessionFormat/cliAnswers.ts)", () => {
  afterEach(stopRunners);
  after(removeTempDirs);

  it('declares an answer for every command that takes --json or --json-output', () => {
    const declared = Object.keys(CLI_ANSWERS);
    const missing = commandsAnsweringJson(buildProgram(() => {})).filter((command) => !declared.includes(command));
    assert.deepEqual(missing, [], 'a command answers JSON that CLI_ANSWERS does not declare');
  });

  it('prints what it declares, and every failure in the one envelope, with the old fields kept for a release', async () => {
    const { repo, env } = scriptedCliSetup({ actor: [[{ write: { path: 'x.txt', content: 'x' } }]], critic: [[done('made x', 0.9)]] });
    const run = (args: string[]) => runCli(args, { cwd: repo, env });

    const plan = answerOf('run --dry-run', await run(['--dry-run', '--json-output', '-p', 'make x']));
    assert.equal(plan.prompt, 'make x');
    const outcome = answerOf('run', await run(['--json-output', '-p', 'make x']));
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.failure, null);
    const id = outcome.session_id;

    assert.deepEqual(
      answerOf('sessions list', await run(['sessions', 'list', '--json'])).map((session) => session.id),
      [id],
    );
    assert.equal(answerOf('sessions show', await run(['sessions', 'show', id, '--json'])).id, id);
    assert.equal(answerOf('sessions stats', await run(['sessions', 'stats', '--json'])).total_sessions, 1);
    assert.equal(answerOf('review', await run(['review', id, '--json'])).session_id, id);
    answerOf('forecast', await run(['forecast', '--json']));
    answerOf('doctor', await run(['doctor', '--json']));
    const added = answerOf('queue add', await run(['queue', 'add', '-p', 'later', '--json'])).added;
    assert.equal(added.length, 1);
    assert.equal(answerOf('queue list', await run(['queue', 'list', '--json'])).tasks[0]!.id, added[0]!.id);
    assert.deepEqual(answerOf('queue move', await run(['queue', 'move', String(added[0]!.id), '1', '--json'])), { id: added[0]!.id, position: 1 });
    const queueFile = `${tempDir('queue-export')}/queue.json`;
    assert.deepEqual(answerOf('queue export', await run(['queue', 'export', '-o', queueFile, '--json'])), {
      file: queueFile,
      tasks: [added[0]!.id],
      base_commit: git(repo, 'rev-parse', 'HEAD').trim(),
    });
    assert.equal(answerOf('queue remove', await run(['queue', 'remove', String(added[0]!.id), '--json'])).removed.id, added[0]!.id);
    const bundle = `${tempDir('bundle')}/b.tar.gz`;
    assert.deepEqual(answerOf('sessions export', await run(['sessions', 'export', id, '-o', bundle, '--json'])).sessions, [id]);

    const missing = await run(['sessions', 'show', 'nope', '--json']);
    assert.equal(missing.code, 2);
    const failed = readCliAnswer(CLI_ANSWERS['sessions show'].schema, missing.stdout);
    assert.ok(failed && !failed.ok, missing.stdout);
    assert.equal(failed.failure.code, 'session_not_found');
    assert.equal(typeof failed.failure.hint, 'string');
    assert.deepEqual(JSON.parse(missing.stdout).error, failed.failure, "0.x's `error` repeats the envelope");

    const refused = await runCli(['--json-output', '-p', 'x'], { cwd: tempDir('not-a-repository'), env });
    const refusal = readCliAnswer(CLI_ANSWERS.run.schema, refused.stdout);
    assert.ok(refusal && !refusal.ok, refused.stdout);
    assert.equal(refusal.failure.code, 'not_a_repository');
    assert.equal(JSON.parse(refused.stdout).error_code, 'not_a_repository', "0.x's flat fields stay a release");
  });
});
