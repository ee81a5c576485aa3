import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runCli, type CliOptions, type CliResult } from '../support/cliProcess.js';
import { asUserWhoCannotReadEverything, HOSTILE_SESSIONS, mkfifo, writeHostileSessions } from '../support/hostileFiles.js';
import { carryOnNaming, done, scriptedCliSetup } from '../support/scriptedAgent.js';
import { startLine, writeSession } from '../support/sessionFixtures.js';
import { createRepo, git, isolateHome, removeTempDirs, tempDir, type IsolatedHome } from '../support/testEnvironment.js';
import { stopRunners } from '../support/processes.js';

/** Long enough for any honest answer; a command still running then has hung on a file. */
const HANG_MS = 15_000;

function finished(result: CliResult, what: string): CliResult {
  assert.equal(result.timedOut, false, `${what} hung (killed after ${HANG_MS} ms):\n${result.stderr}`);
  return result;
}

describe('files that are not what they seem (the built CLI)', () => {
  // A test that fails halfway leaves no runner or agent behind for the tests after it.
  afterEach(stopRunners);
  let home: IsolatedHome;
  let options: CliOptions;
  let good: string;
  const cwd = tempDir();

  before(() => {
    home = isolateHome();
    home.restore();
    ({ good } = writeHostileSessions(home));
    writeSession(home.sessionsDir, [startLine({ prompt: 'pay\u202egpj.exe\u200bnow', timestamp: '2025-02-02T10:00:00Z' })], 'bidi');
    options = { cwd, env: home.env, timeoutMs: HANG_MS, ...asUserWhoCannotReadEverything(home) };
  });
  after(removeTempDirs);

  it('lists the sessions and names every file that is not one, and why, without hanging on a FIFO', async () => {
    const listed = finished(await runCli(['sessions', 'list'], options), 'sessions list');
    assert.equal(listed.code, 0, listed.stderr);
    const rows = listed.stdout.trim().split('\n').slice(1);
    assert.deepEqual(rows.map((row) => row.split(/\s+/)[0]).sort(), ['bidi', good, 'inside'].sort());
    const warned = (id: string) => listed.stderr.split('\n').find((line) => line.startsWith(`warning: ${id}: skipped, `)) ?? `(no warning for ${id})`;
    for (const [id, reason] of HOSTILE_SESSIONS) assert.match(warned(id), reason);
    assert.doesNotMatch(listed.stdout, /SECRET|never read/);

    const json = finished(await runCli(['sessions', 'list', '--json'], options), 'sessions list --json');
    assert.deepEqual((JSON.parse(json.stdout) as Array<{ id: string }>).map((summary) => summary.id).sort(), ['bidi', good, 'inside'].sort());
  });

  it('refuses to show, diff or replay what is not a session file, naming it and what it is', async () => {
    for (const [id, reason] of HOSTILE_SESSIONS) {
      for (const command of [['show'], ['diff'], ['replay'], ['replay', '--json']]) {
        const [verb, ...flags] = command;
        const result = finished(await runCli(['sessions', verb!, id, ...flags], options), `sessions ${command.join(' ')} ${id}`);
        assert.equal(result.code, 2, `${command.join(' ')} ${id}: ${result.stderr}`);
        assert.match(result.stderr, reason, `${command.join(' ')} ${id}`);
        assert.match(result.stderr, /only regular files in the sessions folder are read as sessions/);
        assert.doesNotMatch(result.stderr + result.stdout, /SECRET|EISDIR|\n\s+at /, 'no content from outside, no stack trace');
      }
    }
  });

  it('refuses to delete a folder or a FIFO named like a session, and leaves it be', async () => {
    for (const [id, what] of [
      ['fifo', /fifo\.jsonl is a named pipe \(FIFO\), not a file: it is not a session, and is left as it is/],
      ['folder', /folder\.jsonl is a folder, not a file: it is not a session/],
    ] as const) {
      const result = finished(await runCli(['sessions', 'delete', id], options), `delete ${id}`);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, what);
      assert.ok(fs.existsSync(path.join(home.sessionsDir, `${id}.jsonl`)), `${id} is still there`);
    }
  });

  it('reads a file with carriage-return line endings alike in list and show: neither, and both say why', async () => {
    const listed = finished(await runCli(['sessions', 'list', '--json'], options), 'list');
    assert.ok(!(JSON.parse(listed.stdout) as Array<{ id: string }>).some((summary) => summary.id.endsWith('cronly')), 'not listed');
    assert.match(listed.stderr, /cronly: skipped, .*lines end in a carriage return alone/);
    const shown = finished(await runCli(['sessions', 'show', '2025-02-03T10-00-00Z_cronly'], options), 'show');
    assert.equal(shown.code, 2, 'not shown either');
    assert.match(shown.stderr, /lines end in a carriage return alone, and session lines must end in "\\n"/);
    assert.match(shown.stderr, /cronly\.jsonl has no readable session_start line/);
  });

  it('keeps bidirectional and zero-width characters out of the terminal table', async () => {
    const listed = finished(await runCli(['sessions', 'list'], options), 'list');
    const row = listed.stdout.split('\n').find((line) => line.startsWith('bidi '))!;
    assert.doesNotMatch(row, /[\u202e\u200b]/);
    assert.match(row, /paygpj\.exenow$/, 'shown in the order it is stored');
    const columns = listed.stdout.split('\n').filter(Boolean);
    assert.equal(columns[0]!.indexOf('PROMPT'), row.indexOf('pay'), 'the columns line up');
    const shown = finished(await runCli(['sessions', 'show', 'bidi'], options), 'show');
    assert.doesNotMatch(shown.stdout, /[\u202e\u200b]/);
    const json = finished(await runCli(['sessions', 'show', 'bidi', '--json'], options), 'show --json');
    assert.equal((JSON.parse(json.stdout) as { start: { prompt: string } }).start.prompt, 'pay\u202egpj.exe\u200bnow', 'JSON keeps the text as it is');
  });

  it('keeps every invisible formatting character the sanitiser lists out of the terminal, each one, and the joiners emoji need in', async () => {
    // The bidirectional marks, embeddings, overrides and isolates, and the zero-width and invisible operators.
    const invisible = [0x061c, 0x200b, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064]
      .concat([0x2066, 0x2067, 0x2068, 0x2069, 0xfeff])
      .map((code) => String.fromCodePoint(code));
    const prompt = `start ${invisible.map((character) => `x${character}`).join('')}x end 👩\u200d💻 and\u200cnon-joiner`;
    const own = isolateHome();
    own.restore();
    writeSession(own.sessionsDir, [startLine({ prompt, timestamp: '2025-02-04T10:00:00Z' })], 'invisible');
    const shown = finished(await runCli(['sessions', 'show', 'invisible'], { cwd, env: own.env, timeoutMs: HANG_MS }), 'show');
    assert.equal(shown.code, 0, shown.stderr);
    for (const character of invisible) {
      const name = `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
      assert.ok(!shown.stdout.includes(character), `${name} reached the terminal`);
    }
    assert.ok(shown.stdout.includes(`start ${'x'.repeat(invisible.length + 1)} end 👩\u200d💻 and\u200cnon-joiner`), shown.stdout);
  });

  it('replays a session whose sidecar record is a FIFO from its own lines, and says why', async () => {
    mkfifo(path.join(home.dataHome, 'codeloops', 'sidecars', good, 'events.jsonl'));
    if (options.uid !== undefined) fs.chmodSync(path.join(home.dataHome, 'codeloops', 'sidecars'), 0o755);
    const replayed = finished(await runCli(['sessions', 'replay', good], options), 'replay');
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.match(replayed.stderr, /sidecars\/.*\/events\.jsonl is a named pipe \(FIFO\), not a file: the sidecar record was not read/);
    assert.match(replayed.stdout, /Session .* — The good one/);
    assert.match(replayed.stdout, /critic: DONE/);
  });
});

describe('working folders and project files that are not what they seem (the built CLI)', () => {
  // A test that fails halfway leaves no runner or agent behind for the tests after it.
  afterEach(stopRunners);
  let env: Record<string, string>;
  before(() => {
    const home = isolateHome();
    home.restore();
    env = home.env;
  });
  after(removeTempDirs);

  const refusal = (result: CliResult) => JSON.parse(result.stdout) as { error_code: string; error: string; error_details: Record<string, unknown> };

  it('says what -d names when it is a git folder, a bare repository or a file, and what to give instead', async () => {
    const repo = createRepo({ files: { 'a-file.txt': 'hello\n' } });
    const bare = tempDir('bare-');
    git(bare, 'init', '-q', '--bare');
    const cases: Array<[string, string, RegExp]> = [
      [path.join(repo, '.git'), 'not_a_work_tree', new RegExp(`is a repository's git folder, not a working tree: .*Work in ${repo}, the repository's folder`)],
      [path.join(repo, '.git', 'objects'), 'not_a_work_tree', new RegExp(`is inside the git folder ${repo}/\\.git, not a working tree`)],
      [bare, 'not_a_work_tree', /is a bare git repository: it has no working tree of files for agents to change\. Work in a clone of it/],
      [
        path.join(repo, 'a-file.txt'),
        'directory_missing',
        new RegExp(`a-file\\.txt is a file, not a folder: give the folder of a git repository \\(such as ${repo}, where it is\\)`),
      ],
      [path.join(repo, 'nothing-here'), 'directory_missing', /nothing-here does not exist/],
    ];
    for (const [directory, code, message] of cases) {
      const json = finished(
        await runCli(['-p', 'fix the typo', '-d', directory, '--dry-run', '--json-output'], { cwd: repo, env, timeoutMs: HANG_MS }),
        directory,
      );
      assert.equal(json.code, 2, directory);
      assert.equal(refusal(json).error_code, code, directory);
      assert.match(refusal(json).error, message, directory);
      const told = finished(await runCli(['-p', 'fix the typo', '-d', directory], { cwd: repo, env, timeoutMs: HANG_MS }), directory);
      assert.equal(told.code, 2, directory);
      assert.match(told.stderr, message, directory);
      assert.match(told.stderr, /Pass -d <folder> to work in another folder\./, directory);
      assert.doesNotMatch(told.stderr, /codeloops: false|\n\s+at |rev-parse/, `${directory}: no stack, no git plumbing`);
    }
  });

  it('refuses a codeloops.toml that is a FIFO instead of waiting for a writer', async () => {
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    const toml = mkfifo(path.join(repo, 'codeloops.toml'));
    const dryRun = finished(await runCli(['-p', 'x', '--dry-run', '--json-output'], { cwd: repo, env, timeoutMs: HANG_MS }), '--dry-run');
    assert.equal(dryRun.code, 2);
    assert.equal(refusal(dryRun).error_code, 'config_invalid');
    assert.equal(refusal(dryRun).error_details.file, toml);
    assert.match(refusal(dryRun).error, /codeloops\.toml: is a named pipe \(FIFO\), not a file; a config file must be a regular file/);
    const trust = finished(await runCli(['trust'], { cwd: repo, env, timeoutMs: HANG_MS }), 'trust');
    assert.equal(trust.code, 2);
    assert.match(trust.stderr, /is a named pipe \(FIFO\)/);
  });

  it('quotes file names that hide characters in sessions diff as git would, and the diff still applies', async () => {
    const hidden = 'invoice\u202egpj.exe';
    const renamed = 'bill\u2066\u200b.txt';
    const { repo, env } = scriptedCliSetup({
      actor: [[{ write: { path: hidden, content: 'pay \u202eme\nline 2\nline 3\n' } }], [{ shell: ['mv', hidden, renamed] }]],
      critic: [[carryOnNaming('rename it')], [done()]],
    });
    const run = await runCli(['-p', 'write the invoice'], { cwd: repo, env, timeoutMs: 60_000 });
    assert.equal(run.code, 0, run.stderr);
    const diff = finished(await runCli(['sessions', 'diff', 'latest'], { cwd: repo, env, timeoutMs: HANG_MS }), 'diff');
    assert.equal(diff.code, 0, diff.stderr);
    const invoice = 'invoice\\342\\200\\256gpj.exe';
    const bill = 'bill\\342\\201\\246\\342\\200\\213.txt';
    for (const header of [
      `diff --git "a/${invoice}" "b/${invoice}"`,
      `+++ "b/${invoice}"`,
      `diff --git "a/${invoice}" "b/${bill}"`,
      `rename from "${invoice}"`,
      `rename to "${bill}"`,
    ])
      assert.ok(diff.stdout.split('\n').includes(header), `${header} in:\n${diff.stdout}`);
    const headers = diff.stdout.split('\n').filter((line) => !/^[+ -](?!\+\+ |-- )/.test(line));
    assert.doesNotMatch(headers.join('\n'), /[\u202e\u2066\u200b]/, 'no name shows its hidden characters');
    assert.match(diff.stdout, /^\+pay \u202eme$/m, 'the changed lines go out as they are');
    // The second iteration's diff, names quoted, still applies (backwards, to the tree the loop left).
    const second = finished(await runCli(['sessions', 'diff', 'latest', '--iteration', '2'], { cwd: repo, env, timeoutMs: HANG_MS }), 'diff -i 2');
    const patch = path.join(tempDir(), 'second.patch');
    fs.writeFileSync(patch, second.stdout);
    git(repo, 'apply', '--check', '-R', patch);
  });
});
