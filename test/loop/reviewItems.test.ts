import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openRepository } from '../../src/git/repository.js';
import { readSnapshot, snapshotRef, takeSnapshot } from '../../src/git/snapshots.js';
import { anchorFindings } from '../../src/loop/reviewItems.js';
import { addComment } from '../../src/review/comments.js';
import { rejectHunk } from '../../src/review/hunkReview.js';
import type { ReviewTarget } from '../../src/review/reviewTarget.js';
import type { RunEventOf } from '../../src/sessionFormat/runEvents.js';
import { readReview } from '../../src/sessions/reviewState.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { iterationOf, numberedLines as lines } from '../support/reviewedIterations.js';
import { carryOn, decision, done } from '../support/scriptedAgent.js';
import { runScriptedLoop } from '../support/scriptedLoop.js';
import { createRepo, git, removeTempDirs, tempDir } from '../support/testEnvironment.js';

/**
 * Review items, the open points the loop carries from one iteration to the next: the
 * critic's findings (anchored to lines, claimed by the actor, resolved by the critic),
 * the user's comments and rejections, and the pause in which the user makes them.
 */
describe('review items: the critic’s findings, the user’s comments and rejections, and the pause for review', () => {
  after(removeTempDirs);

  it('gives comments made at the same moment ids of their own', async () => {
    const repo = createRepo({ files: { 'app.txt': lines(5) } });
    const target = await iterationOf(repo, () => fs.writeFileSync(path.join(repo, 'app.txt'), lines(5, { 1: 'one' })));
    const comments = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        addComment({ ...target, lastIteration: 1 }, { iteration: 1, file: 'app.txt', line: 1, endLine: null, text: `comment ${index}` }),
      ),
    );
    assert.deepEqual(comments.map((comment) => comment.id).sort(), ['U1.1', 'U1.2', 'U1.3', 'U1.4', 'U1.5', 'U1.6']);
    assert.equal((await readReview([target.sidecarDir])).comments.length, 6);
  });

  it('anchors the critic’s findings on the tree after the actor, keeps those that point nowhere as general ones, and tells the next actor', async () => {
    const repo = createRepo({ files: { 'a.txt': 'one\ntwo\nthree\n' } });
    const { agent, events, sessionsDir, summary } = await runScriptedLoop(
      repo,
      {
        actor: [[{ write: { path: 'a.txt', content: 'one\nTWO\nthree\nfour\n' } }], [{ print: 'Fixed it.\nAddressed: F1.1' }], [{ print: 'nothing more' }]],
        critic: [
          [
            decision({
              type: 'continue',
              feedback: 'Line 2 shouts.',
              findings: [
                { file: 'a.txt', line: 2, severity: 'error', message: 'TWO should be lower case' },
                { file: 'gone.txt', line: 1, severity: 'warning', message: 'a file that is not there' },
                { file: './a.txt', line: 40, end_line: 41, severity: 'info', message: 'past the end' },
                { message: 'a general remark', severity: 'loud' },
                { file: 'a.txt', line: 'x' },
              ],
            }),
          ],
          [decision({ type: 'continue', feedback: 'One more pass.', resolved: ['F1.1', 'F9.9'] })],
          [done()],
        ],
      },
      { maxIterations: 3 },
    );
    assert.equal(summary.status, 'success');
    const first = events.find((event): event is RunEventOf<'critic_decision'> => event.type === 'critic_decision' && event.iteration === 1)!;
    assert.deepEqual(
      first.findings!.map((finding) => [finding.id, finding.file, finding.line, finding.end_line, finding.severity, finding.anchored]),
      [
        ['F1.1', 'a.txt', 2, 2, 'error', true],
        ['F1.2', 'gone.txt', 1, 1, 'warning', false],
        ['F1.3', 'a.txt', 40, 41, 'info', false],
        ['F1.4', null, null, null, 'warning', false],
      ],
      'a finding without a message is no finding; an unknown severity is a warning',
    );
    const session = await new SessionStore(sessionsDir).load(summary.session_id);
    assert.deepEqual(
      (session.iterations[0] as { findings?: { id: string }[] }).findings?.map((finding) => finding.id),
      ['F1.1', 'F1.2', 'F1.3', 'F1.4'],
      'in the iteration line too',
    );
    const second = agent.prompt('actor', 2);
    assert.match(second, /## Reviewer findings still open\n- F1\.1 in a\.txt:2 \(error\): TWO should be lower case/);
    assert.match(second, /- F1\.2 \(warning\): a file that is not there/, 'a general finding has no place');
    assert.match(second, /Addressed: /);
    assert.ok(events.some((event) => event.type === 'review_claimed' && event.iteration === 2 && event.ids.join() === 'F1.1'));
    assert.match(agent.prompt('critic', 2), /- F1\.1 \(your finding, error\) in a\.txt:2: TWO should be lower case \[the actor says it addressed this\]/);
    const resolution = events.find((event): event is RunEventOf<'critic_decision'> => event.type === 'critic_decision' && event.iteration === 2)!;
    assert.deepEqual(resolution.resolved, ['F1.1'], 'an id it does not know is not recorded');
    assert.doesNotMatch(agent.prompt('actor', 3), /F1\.1/, 'a resolved finding is not repeated');
    assert.match(agent.prompt('actor', 3), /F1\.2/, 'the others stay open');
  });

  it('finds a file the critic names from the folder the loop ran in, below the repository’s top', async () => {
    const repo = createRepo({ files: { 'pkg/a.txt': 'one\ntwo\n', 'a.txt': 'top\n' } });
    const repository = await openRepository(repo);
    const { commit } = await takeSnapshot(repository, 'post');
    const finding = (file: string) => ({ file, line: 2, endLine: 2, severity: 'info' as const, message: 'm' });
    const [inFolder, atTop] = await anchorFindings(repository, commit, 3, [finding('a.txt'), finding('./pkg/a.txt')], 'pkg');
    // `a.txt` at the top has one line: line 2 is in the folder's a.txt, where the critic stood.
    assert.deepEqual([inFolder!.file, inFolder!.anchored], ['pkg/a.txt', true]);
    assert.deepEqual([atTop!.id, atTop!.file, atTop!.anchored], ['F3.2', 'pkg/a.txt', true]);
  });

  it('pauses for review: the user comments and rejects a hunk, the next actor is told (the user first), and stop ends the loop interrupted', async () => {
    const repo = createRepo({ files: { 'app.txt': lines(20) } });
    const pauses: number[] = [];
    let target: ReviewTarget | undefined;
    let sessionId = '';
    const sidecarRoot = tempDir('codeloops-sidecars-');
    const { agent, events, summary } = await runScriptedLoop(
      repo,
      {
        actor: [[{ write: { path: 'app.txt', content: lines(20, { 2: 'renamed', 18: 'also renamed' }) } }], [{ print: 'Addressed: U1.1' }]],
        critic: [[carryOn('Rename the rest too.')]],
      },
      {
        maxIterations: 5,
        sidecarRoot,
        onEvent: (event) => {
          if (event.type === 'run_started') sessionId = event.session_id;
        },
        waitForReview: async (iteration) => {
          pauses.push(iteration);
          if (iteration === 2) return 'stop';
          target = { sessionId, workingDir: repo, sidecarDir: path.join(sidecarRoot, sessionId) };
          // While paused, the user's changes to the tree are allowed.
          const rejected = await rejectHunk({ ...target, iteration: 1, hunk: 2, reason: 'line 18 is public API' });
          assert.equal(rejected.result, 'rejected', rejected.message);
          const comment = await addComment(
            { ...target, lastIteration: 1 },
            {
              iteration: 1,
              file: 'app.txt',
              line: 2,
              endLine: null,
              text: 'Call it `renamed_value` instead',
            },
          );
          assert.equal(comment.id, 'U1.1');
          return 'continue';
        },
      },
    );
    assert.deepEqual(pauses, [1, 2]);
    assert.equal(summary.status, 'interrupted');
    assert.equal(summary.iterations, 2);
    const prompt = agent.prompt('actor', 2);
    const user = prompt.indexOf('## From the user');
    assert.ok(user > 0 && user < prompt.indexOf('## Reviewer feedback'), 'the user’s word comes before the critic’s');
    assert.match(prompt, /- U1\.1 in app\.txt:2 \(on iteration 1\): Call it `renamed_value` instead/);
    assert.match(prompt, /- R1\.1: the user rejected this change of iteration 1 in app\.txt because: line 18 is public API\./);
    assert.match(prompt, /```diff\n@@ .*\n(.*\n)*-line 18\n\+also renamed/);
    assert.deepEqual(
      events.filter((event) => event.type === 'review_delivered').map((event) => (event as RunEventOf<'review_delivered'>).ids),
      [['U1.1', 'R1.1']],
    );
    // The rejection was made before iteration 2's snapshot: the actor's diff of iteration 2 does not include it.
    const repository = await openRepository(repo);
    const pre2 = await readSnapshot(repository, snapshotRef(sessionId, 2, 'pre'));
    assert.equal(git(repo, 'show', `${pre2!.commit}:app.txt`), lines(20, { 2: 'renamed' }));
    const review = await readReview([target!.sidecarDir]);
    assert.equal(review.rejections[0]?.delivered, true, 'a rejection is told once');
    assert.equal(review.comments[0]?.open, true, 'a comment stays open until resolved');
    assert.equal(review.comments[0]?.claimed, true, 'the actor said it addressed it');
    assert.ok(events.some((event) => event.type === 'review_paused'));
    assert.deepEqual(
      events.filter((event) => event.type === 'review_resumed').map((event) => (event as RunEventOf<'review_resumed'>).action),
      ['continue', 'stop'],
    );
  });

  it('refuses to change the tree while a loop is at work, but not while it is paused for review', async () => {
    const repo = createRepo({ files: { 'app.txt': lines(5) } });
    let target: ReviewTarget | undefined;
    let refusal: unknown;
    const sidecarRoot = tempDir('codeloops-sidecars-');
    await runScriptedLoop(
      repo,
      { actor: [[{ write: { path: 'app.txt', content: lines(5, { 1: 'x' }) } }], [{ sleep: 1500 }]], critic: [[carryOn('again')]] },
      {
        maxIterations: 2,
        sidecarRoot,
        onEvent: (event) => {
          if (event.type === 'run_started') target = { sessionId: event.session_id, workingDir: repo, sidecarDir: path.join(sidecarRoot, event.session_id) };
          // The second actor is at work: a rejection now would race it.
          if (event.type === 'phase' && event.phase === 'actor' && event.status === 'started' && event.iteration === 2) {
            rejectHunk({ ...target!, iteration: 1, hunk: 1, reason: null }).catch((error: unknown) => (refusal = error));
          }
        },
        waitForReview: async () => 'continue',
      },
    );
    assert.equal((refusal as { code?: string } | undefined)?.code, 'loop_running');
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(5, { 1: 'x' }));
  });
});
