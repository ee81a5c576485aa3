import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { rollbackOutcomeSchema } from '../../src/sessionFormat/rollbackOutcome.js';
import { timelineEntrySchema, type TimelineEntry } from '../../src/sessionFormat/timelineEntries.js';
import { runCli, type CliResult } from '../support/cliProcess.js';
import { carryOnNaming, done, scriptedCliSetup, type AgentScript } from '../support/scriptedAgent.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { git, removeTempDirs, tempDir, treeOf, writeFile } from '../support/testEnvironment.js';
import { stopRunners } from '../support/processes.js';

const TWO_ITERATIONS: AgentScript = {
  actor: [
    [{ write: { path: 'x.txt', content: 'x1\n' } }, { print: 'wrote x' }],
    [{ write: { path: 'x.txt', content: 'x2\n' } }, { write: { path: 'y.txt', content: 'y\n' } }],
  ],
  critic: [[carryOnNaming('x needs a second pass', ['x.txt says x1'])], [done('x and y are right', 0.9)]],
};

function replayJson(cwd: string, env: Record<string, string>): Promise<CliResult> {
  return runCli(['sessions', 'replay', 'latest', '--json'], { cwd, env });
}

/** The timeline `sessions replay --json` printed, one entry a line, each read through its schema. */
function timelineOf(replayed: CliResult): TimelineEntry[] {
  assert.equal(replayed.code, 0, replayed.stderr);
  return replayed.stdout
    .trimEnd()
    .split('\n')
    .map((line) => timelineEntrySchema.parse(JSON.parse(line)));
}

describe('codeloops rollback and sessions replay (the built CLI)', function () {
  // A test that fails halfway leaves no runner or agent behind for the tests after it.
  afterEach(stopRunners);
  this.timeout(60_000);
  after(removeTempDirs);

  describe('after a loop of two iterations: each rollback result in turn, then the replay of it all', () => {
    // One loop and one sequence of commands, run once in their original order (each step works on the
    // tree the step before left); each result and the tree after its step are kept, and each aspect a
    // user would check is its own test, so one failure hides no other.
    let repo = '';
    let rolled: CliResult;
    let afterRollback: Record<string, string>;
    let nothing: CliResult;
    let conflict: CliResult;
    let afterConflict: Record<string, string>;
    let undo: CliResult;
    let afterUndo: Record<string, string>;
    let bad: CliResult;
    let missing: CliResult;
    let replayed: CliResult;
    let text: CliResult;
    // afterEach runs only around tests: a `before` that fails or times out halfway leaves no runner behind either.
    after(stopRunners);
    before(async () => {
      let env: Record<string, string>;
      ({ repo, env } = scriptedCliSetup(TWO_ITERATIONS));
      const run = await runCli(['-p', 'write x and y'], { cwd: repo, env });
      assert.equal(run.code, 0, run.stderr);

      rolled = await runCli(['rollback', 'latest', '--iteration', '2'], { cwd: repo, env });
      afterRollback = treeOf(repo);

      nothing = await runCli(['rollback', 'latest', '--iteration', '2', '--json'], { cwd: repo, env });

      writeFile(repo, 'x.txt', 'my edit\n');
      conflict = await runCli(['rollback', 'latest', '--iteration', '1', '--json'], { cwd: repo, env });
      afterConflict = treeOf(repo);
      writeFile(repo, 'x.txt', 'x1\n');

      undo = await runCli(['rollback', '--undo', 'latest'], { cwd: repo, env });
      afterUndo = treeOf(repo);

      bad = await runCli(['rollback', 'latest', '--undo', '--iteration', '1'], { cwd: repo, env });

      for (const ref of git(repo, 'for-each-ref', '--format=%(refname)', 'refs/codeloops/').split('\n').filter(Boolean)) git(repo, 'update-ref', '-d', ref);
      missing = await runCli(['rollback', 'latest'], { cwd: repo, env });

      replayed = await replayJson(repo, env);
      text = await runCli(['sessions', 'replay', 'latest'], { cwd: repo, env });
    });

    it('rollback to before iteration 2 exits 0, restores x.txt and removes y.txt, and says how to undo it', () => {
      assert.equal(rolled.code, 0, rolled.stderr);
      assert.match(rolled.stdout, /Rolled session .* back to before iteration 2: restored x\.txt; removed y\.txt/);
      assert.match(rolled.stdout, /Undo it with: codeloops rollback --undo /);
      assert.deepEqual(afterRollback, { 'README.md': '# project\n', 'x.txt': 'x1\n' });
    });

    it('the same rollback again exits 3 and says, as JSON, there is nothing to roll back', () => {
      assert.equal(nothing.code, 3);
      assert.equal(rollbackOutcomeSchema.parse(JSON.parse(nothing.stdout)).result, 'nothing_to_roll_back');
    });

    it('a rollback over a file the user edited exits 4, names the file as a conflict and keeps the edit', () => {
      assert.equal(conflict.code, 4);
      const conflictOutcome = rollbackOutcomeSchema.parse(JSON.parse(conflict.stdout));
      assert.equal(conflictOutcome.result, 'conflict');
      assert.deepEqual(conflictOutcome.conflicts, ['x.txt']);
      assert.equal(afterConflict['x.txt'], 'my edit\n');
    });

    it('rollback --undo puts the files of iteration 2 back and says "Undid rollback 1"', () => {
      assert.equal(undo.code, 0, undo.stdout + undo.stderr);
      assert.match(undo.stdout, /Undid rollback 1/);
      assert.deepEqual(afterUndo, { 'README.md': '# project\n', 'x.txt': 'x2\n', 'y.txt': 'y\n' });
    });

    it('--undo with --iteration is refused with exit 2, saying --undo takes no --iteration', () => {
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--undo takes no --iteration/);
    });

    it('with the snapshot refs deleted, rollback exits 5 and says the session has no snapshots', () => {
      assert.equal(missing.code, 5);
      assert.match(missing.stdout, /No snapshots of session/);
    });

    it('replay --json tells the whole story in order: both iterations, the end, the rollback and its undo', () => {
      const story = timelineOf(replayed)
        .filter((entry) => ['session_started', 'diff', 'verdict', 'session_ended', 'rollback', 'rollback_undone', 'agent_finished'].includes(entry.kind))
        .map(
          (entry) =>
            `${entry.kind}${entry.iteration === null ? '' : ` ${entry.iteration}`}${'role' in entry ? ` ${entry.role}` : ''}${'decision' in entry ? ` ${entry.decision}` : ''}`,
        );
      assert.deepEqual(story, [
        'session_started',
        'agent_finished 1 actor',
        'diff 1',
        'agent_finished 1 critic',
        'verdict 1 CONTINUE',
        'agent_finished 2 actor',
        'diff 2',
        'agent_finished 2 critic',
        'verdict 2 DONE',
        'session_ended',
        'rollback 2',
        'rollback_undone',
      ]);
    });

    it('replay --json gives each entry its time since the start, in time order', () => {
      const offsets = timelineOf(replayed)
        .map((entry) => entry.offset_secs)
        .filter((offset): offset is number => offset !== null);
      assert.deepEqual(
        offsets,
        [...offsets].sort((a, b) => a - b),
        'in time order',
      );
    });

    it('replay --json lists the files of a diff with their status: x.txt modified, y.txt added in iteration 2', () => {
      const secondDiff = timelineOf(replayed).find((entry) => entry.kind === 'diff' && entry.iteration === 2);
      assert.ok(secondDiff?.kind === 'diff');
      assert.deepEqual(
        secondDiff.files?.map((file) => `${file.status} ${file.path}`),
        ['modified x.txt', 'added y.txt'],
      );
    });

    it('replay --json gives the critic’s verdict of iteration 1 with its feedback and remaining issues', () => {
      const verdict = timelineOf(replayed).find((entry) => entry.kind === 'verdict' && entry.iteration === 1);
      assert.ok(verdict?.kind === 'verdict');
      assert.equal(verdict.feedback, 'x needs a second pass');
      assert.deepEqual(verdict.remaining_issues, ['x.txt says x1']);
    });

    it('replay --json shows each phase of iteration 1 starting and finishing: actor, diff, critic', () => {
      const phases = timelineOf(replayed)
        .filter((entry) => entry.kind === 'phase' && entry.iteration === 1)
        .map((entry) => (entry.kind === 'phase' ? `${entry.phase} ${entry.status}` : ''));
      assert.deepEqual(phases, ['actor started', 'actor finished', 'diff started', 'diff finished', 'critic started', 'critic finished']);
    });

    it('replay as text says each step in the words of the live log: the verdict, the rollback, its undo, the end', () => {
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /it 1 +critic: CONTINUE — x needs a second pass/);
      // The words of the live log (sessionFormat/eventWording.ts), one line each.
      assert.match(text.stdout, /rolled back to before iteration 2: 2 files restored/);
      assert.match(text.stdout, /rollback 1 undone: 2 files put back/);
      assert.match(text.stdout, /✓ Done after 2 iterations/);
    });
  });

  it('replays a session of the original codeloops from its three line types alone', async () => {
    const { repo, env, home } = scriptedCliSetup(TWO_ITERATIONS);
    writeSession(home.sessionsDir, [
      startLine(),
      iterationLine(1, { timestamp: '2025-01-27T15:31:00Z' }),
      iterationLine(2, { critic_decision: 'DONE', feedback: null, timestamp: '2025-01-27T15:32:00Z' }),
      endLine({ iterations: 2, timestamp: '2025-01-27T15:32:14Z' }),
    ]);
    const timeline = timelineOf(await replayJson(repo, env));
    assert.deepEqual(
      timeline.map((entry) => `${entry.kind}${entry.iteration === null ? '' : ` ${entry.iteration}`} ${entry.offset_secs ?? '-'}`),
      ['session_started 0', 'phase 1 -', 'diff 1 15', 'verdict 1 15', 'phase 2 -', 'diff 2 75', 'verdict 2 75', 'session_ended 89'],
    );
    const actor = timeline[1]!;
    assert.ok(actor.kind === 'phase' && actor.duration_secs === 10.5);
    const text = await runCli(['sessions', 'replay', 'latest'], { cwd: repo, env });
    assert.match(text.stdout, /it 1 +critic: CONTINUE — feedback 1/);
  });

  it('apply and rollback list a file they write anew as A, one they overwrite as M, one they remove as D', async () => {
    const { repo, env } = scriptedCliSetup({
      actor: [[{ write: { path: 'README.md', content: '# changed\n' } }, { write: { path: 'docs/new.txt', content: 'new\n' } }]],
      critic: [[done()]],
    });
    const run = await runCli(['-p', 'change the readme, add a page'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    // Another worktree of the same repository holds the session's snapshots too: apply there.
    const other = path.join(tempDir(), 'other');
    git(repo, 'worktree', 'add', '-q', '--detach', other, 'HEAD');
    const applied = await runCli(['apply', 'latest', '-d', other], { cwd: repo, env });
    assert.equal(applied.code, 0, applied.stdout + applied.stderr);
    assert.match(applied.stdout, /^ {2}M README\.md$/m);
    assert.match(applied.stdout, /^ {2}A docs\/new\.txt$/m);
    assert.deepEqual(treeOf(other), { 'README.md': '# changed\n', 'docs/new.txt': 'new\n' });

    const rolled = await runCli(['rollback', 'latest'], { cwd: repo, env });
    assert.equal(rolled.code, 0, rolled.stdout + rolled.stderr);
    assert.match(rolled.stdout, /^ {2}M README\.md$/m);
    assert.match(rolled.stdout, /^ {2}D docs\/new\.txt$/m);
    const undone = await runCli(['rollback', '--undo', 'latest', '--json'], { cwd: repo, env });
    const outcome = rollbackOutcomeSchema.parse(JSON.parse(undone.stdout));
    assert.deepEqual(
      [outcome.restored.sort(), outcome.added],
      [['README.md', 'docs/new.txt'], ['docs/new.txt']],
      'added: the restored files that were not there',
    );
  });

  it('in a sparse checkout, a rollback gives back what was on disk: a file outside the cone the loop wrote goes, not its committed content; its undo brings it back', async () => {
    const { repo, env } = scriptedCliSetup({
      actor: [
        [
          { write: { path: 'app/src/main.txt', content: 'main, edited\n' } },
          { write: { path: 'lib/deep/nested/util.txt', content: 'util, as the agent wrote it\n' } },
          { write: { path: 'lib/new.txt', content: 'new outside the cone\n' } },
        ],
      ],
      critic: [[done()]],
    });
    for (const [file, content] of Object.entries({ 'app/src/main.txt': 'main\n', 'lib/deep/nested/util.txt': 'util\n', 'lib/top.txt': 'top\n' }))
      writeFile(repo, file, content);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'a project of two parts');
    git(repo, 'sparse-checkout', 'set', '--cone', 'app/src');
    const before = treeOf(repo);
    assert.deepEqual(Object.keys(before).sort(), ['README.md', 'app/src/main.txt'], 'the cone holds app/src and the top');
    const run = await runCli(['-p', 'edit main and util'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);

    const preview = await runCli(['rollback', 'latest', '--dry-run', '--json'], { cwd: repo, env });
    assert.equal(preview.code, 0, preview.stdout + preview.stderr);
    const planned = rollbackOutcomeSchema.parse(JSON.parse(preview.stdout));
    assert.deepEqual([planned.restored, [...planned.removed].sort()], [['app/src/main.txt'], ['lib/deep/nested/util.txt', 'lib/new.txt']]);

    const rolled = await runCli(['rollback', 'latest'], { cwd: repo, env });
    assert.equal(rolled.code, 0, rolled.stdout + rolled.stderr);
    assert.deepEqual(treeOf(repo), before, 'as it was: nothing outside the cone on disk');
    assert.equal(fs.existsSync(path.join(repo, 'lib')), false, 'no folder the sparse checkout has none of');
    assert.match(git(repo, 'ls-files', '-v', 'lib/deep/nested/util.txt'), /^S /, 'still left out by the sparse checkout');
    assert.equal(git(repo, 'status', '--porcelain'), '');

    const undone = await runCli(['rollback', '--undo', 'latest'], { cwd: repo, env });
    assert.equal(undone.code, 0, undone.stdout + undone.stderr);
    assert.equal(fs.readFileSync(path.join(repo, 'lib/deep/nested/util.txt'), 'utf8'), 'util, as the agent wrote it\n');
    assert.equal(fs.readFileSync(path.join(repo, 'lib/new.txt'), 'utf8'), 'new outside the cone\n');
  });
});
