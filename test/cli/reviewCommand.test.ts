import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sessionReviewSchema } from '../../src/sessionFormat/reviewRecords.js';
import * as z from '../../src/sessionFormat/zod.js';
import { followRunEvents, runCli, startCli } from '../support/cliProcess.js';
import { mkfifo } from '../support/hostileFiles.js';
import { carryOnNaming, decision, done, scriptedCliSetup } from '../support/scriptedAgent.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { git, removeTempDirs } from '../support/testEnvironment.js';

const lines = (count: number, change: Record<number, string> = {}) =>
  Array.from({ length: count }, (_, index) => change[index + 1] ?? `line ${index + 1}`).join('\n') + '\n';

describe('codeloops review, reject, comment, resolve, stage (the built CLI)', () => {
  after(removeTempDirs);

  it('lists an iteration’s hunks, takes a comment and a rejected hunk, and a finished session resumes with them', async () => {
    const { repo, env, agent } = scriptedCliSetup({
      actor: [
        [{ write: { path: 'app.txt', content: lines(20, { 2: 'two', 18: 'eighteen' }) } }],
        [{ write: { path: 'app.txt', content: lines(20, { 2: 'TWO', 18: 'eighteen' }) } }],
        [{ print: 'Done as asked.\nAddressed: U2.1, R2.1' }],
      ],
      critic: [[carryOnNaming('Shout line 2')], [done('Line 2 shouts')], [done('Both done')]],
    });
    fs.writeFileSync(path.join(repo, 'app.txt'), lines(20));
    const run = await runCli(['-p', 'Edit app.txt', '--json-output'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    const id = (JSON.parse(run.stdout) as { session_id: string }).session_id;

    const listed = await runCli(['review', id, '--iteration', '1'], { cwd: repo, env });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /── Iteration 1 ──\n\[1\] app\.txt\n {4}@@ -1,5 \+1,5 @@\n(.*\n)* {4}-line 2\n {4}\+two/);
    assert.match(listed.stdout, /\[2\] app\.txt\n {4}@@ -15,6 \+15,6 @@/);
    const json = z.strictObject(sessionReviewSchema.shape).parse(JSON.parse((await runCli(['review', id, '--json'], { cwd: repo, env })).stdout));
    assert.deepEqual(
      json.iterations.map((iteration) => [iteration.iteration, iteration.hunks?.map((hunk) => hunk.number)]),
      [
        [1, [1, 2]],
        [2, [1]],
      ],
    );

    const finished = await runCli(['resume', id], { cwd: repo, env });
    assert.equal(finished.code, 2);
    assert.match(finished.stderr, /already finished with success/);
    assert.match(finished.stderr, /codeloops comment <session>/, 'the hint says how to open it again');

    const comment = await runCli(['comment', id, '--iteration', '2', '--file', 'app.txt', '--line', '2', 'Lower case after all, sorry'], { cwd: repo, env });
    assert.equal(comment.code, 0, comment.stderr);
    assert.match(comment.stdout, /Comment U2\.1 left/);
    const rejected = await runCli(['reject', id, '--iteration', '1', '--hunk', '2', '--reason', 'line 18 is public'], { cwd: repo, env });
    assert.equal(rejected.code, 0, rejected.stderr);
    assert.match(rejected.stdout, /Undid hunk 2 of iteration 1 in app\.txt \(R1\.1\)/);
    assert.match(rejected.stdout, /codeloops reject --undo .* --id R1\.1/);
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(20, { 2: 'TWO' }));

    const resumed = await runCli(['resume', id, '--json-output'], { cwd: repo, env });
    assert.equal(resumed.code, 0, resumed.stderr);
    const carried = JSON.parse(resumed.stdout) as { session_id: string; iterations: number; session_file: string };
    assert.notEqual(carried.session_id, id);
    assert.equal(carried.iterations, 3);
    assertValidSessionFile(carried.session_file);
    const prompt = agent.prompt('actor', 3);
    assert.match(
      prompt,
      /## From the user \(the person you work for\): address these first\n- U2\.1 in app\.txt:2 \(on iteration 2\): Lower case after all, sorry/,
    );
    assert.match(prompt, /- R1\.1: the user rejected this change of iteration 1 in app\.txt because: line 18 is public\./);
    assert.match(agent.prompt('critic', 3), /U2\.1 \(from the user\) in app\.txt:2: Lower case after all, sorry \[the actor says it addressed this\]/);

    // The feedback went on with the resumed session: the first is finished again, and its comment is the new session's to resolve.
    const again = await runCli(['resume', id], { cwd: repo, env });
    assert.equal(again.code, 2, again.stdout);
    assert.match(again.stderr, /already finished with success/);
    const resolved = await runCli(['resolve', carried.session_id, 'U2.1'], { cwd: repo, env });
    assert.equal(resolved.code, 0, resolved.stderr);
    const review = sessionReviewSchema.parse(JSON.parse((await runCli(['review', carried.session_id, '--json'], { cwd: repo, env })).stdout));
    assert.deepEqual(
      review.comments.map((item) => [item.id, item.open]),
      [['U2.1', false]],
    );
  });

  it('says which hunk and which comment it cannot take, with a stable exit code', async () => {
    const { repo, env } = scriptedCliSetup({ actor: [[{ write: { path: 'a.txt', content: 'a\n' } }]], critic: [[done()]] });
    const run = await runCli(['-p', 'Write a', '--json-output'], { cwd: repo, env });
    const id = (JSON.parse(run.stdout) as { session_id: string }).session_id;
    const noHunk = await runCli(['reject', id, '--iteration', '1', '--hunk', '9'], { cwd: repo, env });
    assert.equal(noHunk.code, 2);
    assert.match(noHunk.stderr, /Iteration 1 of session .* has hunks 1–1, not 9\.\n.*codeloops review <session> --iteration N/);
    const noIteration = await runCli(['reject', id, '--iteration', '4', '--hunk', '1'], { cwd: repo, env });
    assert.match(noIteration.stderr, /has no iteration 4 \(iterations: 1\)/);
    const lineWithoutFile = await runCli(['comment', id, '--line', '3', 'here'], { cwd: repo, env });
    assert.equal(lineWithoutFile.code, 2);
    assert.match(lineWithoutFile.stderr, /A line needs the file it is in/);
    const unknown = await runCli(['resolve', id, 'F7.7'], { cwd: repo, env });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /has no finding or comment F7\.7/);
    const nothing = await runCli(['reject', '--undo', id], { cwd: repo, env });
    assert.equal(nothing.code, 3, nothing.stderr);
  });

  it('stages an iteration into the index from the command line', async () => {
    const { repo, env } = scriptedCliSetup({ actor: [[{ write: { path: 'a.txt', content: 'a\n' } }]], critic: [[done()]] });
    const id = (JSON.parse((await runCli(['-p', 'Write a', '--json-output'], { cwd: repo, env })).stdout) as { session_id: string }).session_id;
    const staged = await runCli(['stage', id, '--iteration', '1', '--json'], { cwd: repo, env });
    assert.equal(staged.code, 0, staged.stderr);
    assert.deepEqual((JSON.parse(staged.stdout) as { files: string[] }).files, ['a.txt']);
    const status = await import('node:child_process').then(({ execFileSync }) =>
      execFileSync('git', ['status', '--porcelain'], { cwd: repo, encoding: 'utf8' }),
    );
    assert.match(status, /^A {2}a\.txt$/m);
  });

  it('refuses reject, stage and comment when a FIFO sits where the review is recorded, before changing a file, instead of hanging', async () => {
    const { repo, env, home } = scriptedCliSetup({
      actor: [[{ write: { path: 'app.txt', content: lines(10, { 2: 'two' }) } }]],
      critic: [[done()]],
    });
    fs.writeFileSync(path.join(repo, 'app.txt'), lines(10));
    const run = await runCli(['-p', 'Edit app.txt', '--json-output'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    const id = (JSON.parse(run.stdout) as { session_id: string }).session_id;
    const record = mkfifo(path.join(home.dataHome, 'codeloops', 'sidecars', id, 'review.jsonl'));
    const before = { refs: git(repo, 'for-each-ref'), index: git(repo, 'ls-files', '-s'), status: git(repo, 'status', '--porcelain') };
    for (const args of [
      ['reject', id, '--iteration', '1', '--hunk', '1', '--json'],
      ['stage', id, '--iteration', '1', '--json'],
      ['comment', id, 'Name it better', '--json'],
    ]) {
      // A writer that opened the FIFO would wait for a reader forever: the limit turns that into a failure, not a hung run.
      const refused = await runCli(args, { cwd: repo, env, timeoutMs: 30_000 });
      assert.equal(refused.timedOut, false, `${args[0]} hung on the FIFO`);
      assert.equal(refused.code, 2, refused.stderr);
      const error = (JSON.parse(refused.stdout) as { error: { code: string; message: string } }).error;
      assert.equal(error.code, 'not_a_file', args[0]);
      assert.match(error.message, /review\.jsonl is a named pipe \(FIFO\), not a file/);
      assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(10, { 2: 'two' }), `${args[0]} changed no file`);
      assert.deepEqual({ refs: git(repo, 'for-each-ref'), index: git(repo, 'ls-files', '-s'), status: git(repo, 'status', '--porcelain') }, before);
    }
    assert.ok(fs.lstatSync(record).isFIFO(), 'the FIFO is left as it is');
  });

  it('lists a finding whose lines run past the end of its file as a general one, and one within it at its lines', async () => {
    const { repo, env } = scriptedCliSetup({
      actor: [[{ write: { path: 'a.txt', content: 'one\ntwo\nthree\n' } }]],
      critic: [
        [
          decision({
            type: 'done',
            summary: 'Done',
            confidence: 0.9,
            findings: [
              { file: 'a.txt', line: 2, end_line: 9, severity: 'warning', message: 'runs past the end' },
              { file: 'a.txt', line: 2, end_line: 3, severity: 'info', message: 'within the file' },
            ],
          }),
        ],
      ],
    });
    const run = await runCli(['-p', 'Write a', '--json-output'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    const id = (JSON.parse(run.stdout) as { session_id: string }).session_id;
    const json = sessionReviewSchema.parse(JSON.parse((await runCli(['review', id, '--json'], { cwd: repo, env })).stdout));
    assert.deepEqual(
      json.findings.map((finding) => [finding.id, finding.file, finding.line, finding.end_line, finding.anchored]),
      [
        ['F1.1', 'a.txt', 2, 9, false],
        ['F1.2', 'a.txt', 2, 3, true],
      ],
    );
    const listed = await runCli(['review', id], { cwd: repo, env });
    assert.match(listed.stdout, /^ {2}F1\.1 \(warning, general: a\.txt:2-9 is not in the iteration’s files\): runs past the end$/m);
    assert.match(listed.stdout, /^ {2}F1\.2 a\.txt:2-3 \(info\): within the file$/m);
  });

  it('--review waits after each iteration that goes on: the editor’s protocol on stdin continues it, then stops it', async () => {
    const { repo, env } = scriptedCliSetup({
      actor: [[{ write: { path: 'a.txt', content: 'a\n' } }], [{ write: { path: 'b.txt', content: 'b\n' } }]],
      critic: [[carryOnNaming('more')]],
    });
    const run = startCli(['-p', 'Write files', '--review', '--events', 'ndjson'], { cwd: repo, env, stdin: 'pipe' });
    const { events, until } = followRunEvents(run);
    const paused = (count: number) => until((seen) => seen.filter((event) => event.type === 'review_paused').length >= count);
    await paused(1);
    assert.ok(fs.existsSync(path.join(repo, 'a.txt')));
    assert.ok(!fs.existsSync(path.join(repo, 'b.txt')), 'the second iteration waits');
    run.child.stdin!.write('{"type":"continue"}\n');
    await paused(2);
    assert.ok(fs.existsSync(path.join(repo, 'b.txt')));
    run.child.stdin!.write('{"type":"stop"}\n');
    const result = await run.done;
    assert.equal(result.code, 130, result.stderr);
    const started = events.find((event) => event.type === 'run_started');
    assert.equal(started?.type === 'run_started' ? started.guards?.review : undefined, 'pause');
  });
});
