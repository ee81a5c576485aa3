import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parseConfigText, projectConfigSchema } from '../../src/config/configFiles.js';
import { loadRunSettings } from '../../src/config/runSettings.js';
import { sessionStatsSchema, sessionSummarySchema } from '../../src/sessionFormat/sessionSummaries.js';
import * as z from '../../src/sessionFormat/zod.js';
import { runCli, startCli } from '../support/cliProcess.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { createRepo, isolateHome, removeTempDirs, tempDir } from '../support/testEnvironment.js';

describe('codeloops sessions (the built CLI)', () => {
  let env: Record<string, string>;
  let ids: string[];
  let cwd: string;

  before(() => {
    cwd = tempDir();
    const home = isolateHome();
    home.restore();
    env = home.env;
    ids = [
      writeSession(home.sessionsDir, [
        startLine({ prompt: 'Add login 🔐', timestamp: '2025-01-01T10:00:00Z', working_dir: '/w/alpha' }),
        iterationLine(1, { critic_decision: 'DONE', feedback: null, git_diff: 'diff --git a/login b/login\n+ok\n' }),
        endLine({ total_cost_usd: 0.4321, total_tokens: 52_000 }),
      ]),
      writeSession(home.sessionsDir, [
        startLine({ prompt: 'Fix logout', timestamp: '2025-01-03T10:00:00Z', working_dir: '/w/beta' }),
        // As this runner writes them (with its extra fields): each iteration's own diff.
        iterationLine(1, { git_insertions: 0, git_deletions: 0 }),
        iterationLine(2, { git_diff: 'diff --git a/two b/two\n', git_insertions: 0, git_deletions: 0 }),
        endLine({ outcome: 'max_iterations_reached', iterations: 2, summary: null, confidence: null }),
      ]),
      writeSession(home.sessionsDir, [
        startLine({ prompt: 'Still running', timestamp: '2025-01-04T10:00:00Z', working_dir: '/w/beta' }),
        { raw: '{"type":"iteration","iter' },
      ]),
    ];
  });
  after(removeTempDirs);

  it('lists newest first as a table, and as JSON in the documented SessionSummary shape', async () => {
    const table = await runCli(['sessions', 'list'], { cwd, env });
    assert.equal(table.code, 0, table.stderr);
    const rows = table.stdout.trim().split('\n');
    assert.match(rows[0]!, /^ID\s+OUTCOME\s+ITER\s+DURATION\s+COST\s+PROJECT\s+PROMPT$/);
    assert.deepEqual(
      rows.slice(1).map((row) => row.split(/\s{2,}/)[0]),
      [ids[2], ids[1], ids[0]],
    );
    assert.match(rows[3]!, /success\s+1\s+42\.0s\s+\$0\.43\s+alpha\s+Add login 🔐/);
    assert.match(rows[2]!, /max_iterations_reached\s+2\s+42\.0s\s+—\s+beta/, 'no cost recorded: a dash, not $0');
    assert.match(table.stderr, /warning: .*torn/);

    const json = await runCli(['sessions', 'list', '--json', '--outcome', 'success', 'max_iterations_reached'], { cwd, env });
    const summaries = (JSON.parse(json.stdout) as unknown[]).map((item) => z.strictObject(sessionSummarySchema.shape).parse(item));
    assert.deepEqual(
      summaries.map((summary) => summary.id),
      [ids[1], ids[0]],
    );
  });

  it('ends quietly when whoever reads its output goes away (| head)', async () => {
    const home = isolateHome();
    home.restore();
    // More than a pipe holds, so that writing goes on after the reader has gone.
    for (let i = 0; i < 1500; i++)
      writeSession(home.sessionsDir, [startLine({ prompt: `task ${i}`, timestamp: new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString() })]);
    for (const args of [
      ['sessions', 'list'],
      ['sessions', 'list', '--json'],
    ]) {
      const run = startCli(args, { cwd, env: home.env });
      await new Promise<void>((resolve) => run.child.stdout!.once('data', () => resolve()));
      run.child.stdout!.destroy(); // the reader closes its end of the pipe
      const result = await run.done;
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      assert.doesNotMatch(result.stderr, /crash|EPIPE|at /, args.join(' '));
    }
  });

  it('filters by date, search and project', async () => {
    const list = async (...args: string[]) =>
      (JSON.parse((await runCli(['sessions', 'list', '--json', ...args], { cwd, env })).stdout) as Array<{ id: string }>).map((s) => s.id);
    assert.deepEqual(await list('--after', '2025-01-02', '--before', '2025-01-03'), [ids[1]]);
    assert.deepEqual(await list('--search', 'LOGIN'), [ids[0]]);
    assert.deepEqual(await list('--project', 'beta'), [ids[2], ids[1]]);
    const bad = await runCli(['sessions', 'list', '--outcome', 'great'], { cwd, env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--outcome great is not an outcome/);
  });

  it('shows a session by unique prefix, as text and JSON', async () => {
    const text = await runCli(['sessions', 'show', '2025-01-03'], { cwd, env });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /outcome +max_iterations_reached after 2 iteration/);
    assert.match(text.stdout, /Iteration 2 +CONTINUE/);
    assert.match(text.stdout, /feedback 2/);
    const json = JSON.parse((await runCli(['sessions', 'show', ids[0]!, '--json'], { cwd, env })).stdout);
    assert.deepEqual(Object.keys(json), ['id', 'start', 'iterations', 'end']);
    assert.equal(json.start.prompt, 'Add login 🔐');
    const missing = await runCli(['sessions', 'show', 'nope'], { cwd, env });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /No session "nope"/);
    assert.equal(missing.stdout, '');
  });

  it('answers a failed --json command in JSON too: its stable code, the message, and what to type next', async () => {
    const cases = [
      { args: ['sessions', 'show', 'nope', '--json'], code: 'session_not_found' },
      { args: ['sessions', 'show', '2025-01', '--json'], code: 'session_ambiguous' },
      { args: ['sessions', 'delete', 'nope', '--json'], code: 'session_not_found' },
      { args: ['apply', 'nope', '--json'], code: 'session_not_found' },
    ];
    for (const { args, code } of cases) {
      const failed = await runCli(args, { cwd, env });
      assert.equal(failed.code, 2, args.join(' '));
      const { error } = JSON.parse(failed.stdout) as { error: { code: string; message: string; details: object; hint: string | null } };
      assert.equal(error.code, code, args.join(' '));
      assert.ok(failed.stderr.includes(error.message), 'the same words on stderr, for whoever reads them');
      if (error.hint !== null) assert.ok(failed.stderr.includes(error.hint));
    }
    // Refused while parsing the command line, before any command ran: still in JSON.
    const unparsed = await runCli(['sessions', 'show', ids[0]!, '--iteration', '2', '--json'], { cwd, env });
    assert.notEqual(unparsed.code, 0);
    assert.equal((JSON.parse(unparsed.stdout) as { error: { code: string } }).error.code, 'usage');
    assert.match(
      (JSON.parse((await runCli(['sessions', 'show', 'nope', '--json'], { cwd, env })).stdout) as { error: { hint: string } }).error.hint,
      /codeloops sessions list/,
    );
  });

  it('refuses an empty session or group id as a usage error in every command that takes one, touching nothing', async () => {
    // One session alone: an empty prefix matches it, so a command that took "" as a prefix would act on it.
    const home = isolateHome();
    home.restore();
    const only = writeSession(home.sessionsDir, [startLine({ prompt: 'The only one', working_dir: cwd }), iterationLine(1), endLine()]);
    const sessionFile = path.join(home.sessionsDir, `${only}.jsonl`);
    const before = fs.readFileSync(sessionFile, 'utf8');
    const bundle = path.join(tempDir(), 'bundle.tar.gz');
    const commands = [
      ['sessions', 'show', '', '--json'],
      ['sessions', 'diff', ''],
      ['sessions', 'replay', '', '--json'],
      ['sessions', 'delete', '', '--json'],
      ['sessions', 'export', '', '-o', bundle, '--json'],
      ['resume', '', '--json-output'],
      ['rollback', '', '--json'],
      ['candidates', '', '--json'],
      ['apply', '', '--json'],
      ['review', '', '--json'],
      ['reject', '', '--hunk', '1', '--json'],
      ['comment', '', 'a comment', '--json'],
      ['resolve', '', 'F1.1'],
      ['stage', '', '--json'],
    ];
    for (const args of commands) {
      const refused = await runCli(args, { cwd, env: home.env });
      const what = `codeloops ${args.join(' ')}`;
      assert.equal(refused.code, 2, `${what}: ${refused.stderr}`);
      assert.match(refused.stderr, /id is empty: give (a group id|an id)/, what);
      if (args.includes('--json')) assert.equal((JSON.parse(refused.stdout) as { error: { code: string } }).error.code, 'usage', what);
    }
    assert.equal(fs.readFileSync(sessionFile, 'utf8'), before, 'the session is as it was');
    assert.equal(fs.existsSync(bundle), false, 'nothing was exported');
  });

  it('prints recorded diffs, all or one iteration', async () => {
    const all = await runCli(['sessions', 'diff', ids[1]!], { cwd, env });
    assert.match(all.stdout, /# iteration 1\ndiff --git a\/f1 b\/f1\n# iteration 2\ndiff --git a\/two b\/two\n/);
    const one = await runCli(['sessions', 'diff', ids[1]!, '--iteration', '2'], { cwd, env });
    assert.equal(one.stdout, 'diff --git a/two b/two\n');
    const none = await runCli(['sessions', 'diff', ids[1]!, '-i', '9'], { cwd, env });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /has no iteration 9 \(iterations: 1, 2\)/);
  });

  it('says each warning once, each on a line of its own: while listing, and with the session it is about', async () => {
    const home = isolateHome();
    home.restore();
    const broken = writeSession(home.sessionsDir, [
      startLine({ prompt: 'Broken twice', timestamp: '2025-02-01T10:00:00Z' }),
      { raw: 'not json at all\n' },
      iterationLine(1, { git_insertions: 0, git_deletions: 0 }),
      { raw: '{"type":"iteration","iteration_number":2,"actor_out' },
    ]);
    writeSession(home.sessionsDir, [startLine({ prompt: 'Another broken one', timestamp: '2025-01-01T10:00:00Z' }), { raw: '{"type":"session_end"' }]);
    const warningLines = (text: string) => text.split('\n').filter((line) => line.includes('warning:'));
    const assertOwnLines = (lines: string[]) => {
      for (const line of lines) assert.equal(line.match(/warning:/g)!.length, 1, `one warning a line: ${line}`);
      assert.ok(
        lines.every((line) => line.startsWith('warning: ')),
        lines.join('\n'),
      );
    };

    const list = await runCli(['sessions', 'list'], { cwd, env: home.env });
    assertOwnLines(warningLines(list.stderr));
    assert.equal(warningLines(list.stderr).length, 2, list.stderr);

    const show = await runCli(['sessions', 'show', 'latest'], { cwd, env: home.env });
    assert.equal(show.stderr, '', 'not again on stderr, nor about the other session');
    const shown = warningLines(show.stdout);
    assertOwnLines(shown);
    assert.deepEqual(shown, ['warning: skipped line 2: not valid JSON', 'warning: skipped a torn last line 4 (not valid JSON)']);
    assert.match(show.stdout, /Iteration 1 /, 'the readable line between them is kept');

    const json = await runCli(['sessions', 'show', broken, '--json'], { cwd, env: home.env });
    assert.equal(JSON.parse(json.stdout).iterations.length, 1);
    assert.deepEqual(warningLines(json.stderr), shown);
  });

  it('computes stats in the documented SessionStats shape', async () => {
    const result = await runCli(['sessions', 'stats', '--json'], { cwd, env });
    const stats = z.strictObject(sessionStatsSchema.shape).parse(JSON.parse(result.stdout));
    assert.equal(stats.total_sessions, 3);
    assert.equal(stats.success_rate, 1 / 3);
    assert.deepEqual(
      stats.by_project.map((project) => [project.project, project.total]),
      [
        ['beta', 2],
        ['alpha', 1],
      ],
    );
    const text = await runCli(['sessions', 'stats'], { cwd, env });
    assert.match(text.stdout, /Success rate +33%/);
  });
});

describe('codeloops init', () => {
  after(removeTempDirs);

  it('writes a commented global config naming the agents it found, and will not overwrite it', async () => {
    const home = isolateHome();
    home.restore();
    const bin = tempDir();
    fs.writeFileSync(path.join(bin, 'codex'), '#!/bin/sh\n', { mode: 0o755 });
    const env = { ...home.env, PATH: bin };
    const first = await runCli(['init'], { cwd: bin, env });
    assert.equal(first.code, 0, first.stderr);
    const file = path.join(home.configHome, 'codeloops', 'config.toml');
    assert.match(first.stdout, new RegExp(`Wrote ${file.replace(/[.\\/]/g, '\\$&')}`));
    assert.match(fs.readFileSync(file, 'utf8'), /agent = "codex"/);
    const second = await runCli(['init'], { cwd: bin, env });
    assert.equal(second.code, 2);
    assert.match(second.stderr, /already exists.*--force/);
  });

  it("in a repository, suggests the project's own test commands as checks, commented out so nothing runs unasked", async () => {
    const home = isolateHome();
    home.restore();
    const repo = createRepo({
      files: {
        'package.json': JSON.stringify({ scripts: { test: 'mocha' } }),
        'yarn.lock': '',
        Makefile: 'build:\n\tcc main.c\n\ntest: build\n\t./run-tests\n',
        'go.mod': 'module example.com/demo\n',
      },
    });
    const result = await runCli(['init'], { cwd: repo, env: home.env });
    assert.equal(result.code, 0, result.stderr);
    const file = path.join(repo, 'codeloops.toml');
    assert.match(result.stdout, /Checks found: yarn test, go test \.\/\.\.\., make test/);
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /# Found in the "test" script in package\.json:\n# \[\[checks\]\]\n# name = "tests"\n# run = "yarn test"/);
    assert.match(text, /# run = "make test"/);
    // As written it runs nothing, so it needs no trust; uncommented, it names the checks.
    const settings = loadRunSettings({ workingDir: repo, env: home.env });
    assert.deepEqual(settings.checks, []);
    const uncommented = text.replace(/^# (\[\[checks\]\]|name|run|timeout_secs|required)/gm, '$1').replace(/ +# false:.*$/gm, '');
    assert.deepEqual(
      parseConfigText(file, uncommented, projectConfigSchema).checks?.map((check) => check.run),
      ['yarn test', 'go test ./...', 'make test'],
    );
  });
});
