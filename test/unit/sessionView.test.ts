import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';
import { EVENTS_FILE } from '../../src/sessionFormat/sessionFiles.js';
import { SessionLibrary } from '../../src/sessionView/sessionLibrary.js';
import { splitUnifiedDiff } from '../../src/sessionView/unifiedDiff.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { appendReviewRecord } from '../../src/sessionWriter/reviewRecorder.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

const DIFF = [
  'diff --git a/src/app.ts b/src/app.ts',
  'index 1111111..2222222 100644',
  '--- a/src/app.ts',
  '+++ b/src/app.ts',
  '@@ -1,2 +1,3 @@',
  ' keep',
  '-old',
  '+new',
  '+more',
  'diff --git a/docs/new file.md b/docs/new file.md',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/docs/new file.md',
  '@@ -0,0 +1 @@',
  '+hello',
  'diff --git a/gone.txt b/gone.txt',
  'deleted file mode 100644',
  '--- a/gone.txt',
  '+++ /dev/null',
  '@@ -1 +0,0 @@',
  '-bye',
  'diff --git a/old.txt b/renamed.txt',
  'similarity index 100%',
  'rename from old.txt',
  'rename to renamed.txt',
  'diff --git a/logo.png b/logo.png',
  'new file mode 100644',
  'Binary files /dev/null and b/logo.png differ',
  '',
].join('\n');

describe('unified diffs split into files', () => {
  it('knows each file’s status, paths and counts, for sessions without snapshots', () => {
    const files = splitUnifiedDiff(DIFF).map(({ patch: _patch, ...file }) => file);
    assert.deepEqual(files, [
      { path: 'src/app.ts', status: 'modified', insertions: 2, deletions: 1 },
      { path: 'docs/new file.md', status: 'added', insertions: 1, deletions: 0 },
      { path: 'gone.txt', status: 'deleted', insertions: 0, deletions: 1 },
      { path: 'renamed.txt', oldPath: 'old.txt', status: 'renamed', insertions: 0, deletions: 0 },
      { path: 'logo.png', status: 'added', insertions: null, deletions: null },
    ]);
    assert.ok(splitUnifiedDiff(DIFF)[0]!.patch.startsWith('diff --git a/src/app.ts'));
    assert.deepEqual(splitUnifiedDiff(''), []);
  });
});

describe('the viewer’s model of a session', () => {
  after(removeTempDirs);

  it('joins the session file and its sidecar record: files, usage, durations, the critic’s words', async () => {
    const dir = tempDir();
    const id = writeSession(dir, [
      startLine({ prompt: 'Do it', working_dir: '/w/proj' }),
      iterationLine(1, { git_diff: DIFF, git_files_changed: 5, remaining_issues: ['tests'] }),
      iterationLine(2, { critic_decision: 'DONE', feedback: null }),
      endLine({ iterations: 2, summary: 'Done', confidence: 0.8 }),
    ]);
    const at = '2025-01-27T15:31:00Z';
    const events: RunEvent[] = [
      {
        type: 'agent_finished',
        iteration: 1,
        role: 'actor',
        exit_code: 0,
        duration_secs: 10,
        succeeded: true,
        failure_reason: null,
        timed_out: false,
        interrupted: false,
        agent_session_id: 'a',
        usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.5 },
        tool_calls: 3,
        timestamp: at,
      },
      {
        type: 'agent_finished',
        iteration: 1,
        role: 'critic',
        exit_code: 0,
        duration_secs: 4,
        succeeded: true,
        failure_reason: null,
        timed_out: false,
        interrupted: false,
        agent_session_id: 'b',
        usage: { inputTokens: 50, outputTokens: 5, costUsd: 0.25 },
        tool_calls: 0,
        timestamp: at,
      },
      { type: 'phase', iteration: 1, phase: 'critic', status: 'finished', duration_secs: 4.5, timestamp: at },
      {
        type: 'critic_decision',
        iteration: 1,
        decision: 'CONTINUE',
        feedback: 'feedback 1',
        summary: null,
        confidence: null,
        remaining_issues: ['tests'],
        source: 'block',
        critic_output: 'The critic’s full answer',
        timestamp: at,
      },
      {
        type: 'diff_captured',
        iteration: 2,
        files_changed: 1,
        insertions: 4,
        deletions: 0,
        files: [{ path: 'x.ts', status: 'added', insertions: 4, deletions: 0 }],
        truncated: false,
        timestamp: at,
      },
    ];
    // The record as the runner leaves it, read by the library the viewers use.
    const sidecar = tempDir('sidecar-');
    fs.writeFileSync(path.join(sidecar, EVENTS_FILE), events.map((event) => JSON.stringify(event)).join('\n') + '\n');
    const library = new SessionLibrary(new SessionStore(dir), () => sidecar);
    const view = await library.view(id);
    assert.equal(view.project, 'proj');
    assert.equal(view.end?.outcome, 'success');
    assert.equal(view.total_cost_usd, 0.75);
    assert.equal(view.total_tokens, 165);
    const [first, second] = view.iterations;
    assert.equal(first!.files.length, 5, 'from the recorded diff');
    assert.equal(first!.git_insertions, 3);
    assert.equal(first!.critic_duration_secs, 4.5);
    assert.equal(first!.tool_calls, 3);
    assert.deepEqual(first!.remaining_issues, ['tests']);
    assert.deepEqual(second!.files, [{ path: 'x.ts', status: 'added', insertions: 4, deletions: 0 }], 'from the sidecar when it has them');
    assert.equal(second!.actor_usage, null);
    const detail = (await library.detail(id, 1))!;
    assert.equal(detail.critic_output, 'The critic’s full answer', 'from the record, on demand');
    assert.equal(detail.diff, DIFF);
    assert.equal(await library.detail(id, 9), undefined);
  });

  it('shows the protected changes that stood on each iteration, where each stands now, and why a DONE was refused', async () => {
    const skipped = { file: 'test/sum.test.js', kind: 'skip_added' as const, detail: 'test.skip' };
    const removed = { file: 'test/old.test.js', kind: 'tests_removed' as const, detail: '1 of 2 test cases removed' };
    const lines = [
      startLine(),
      iterationLine(1, { critic_verdict: 'DONE', failed_checks: ['lint'], protected_changes: [skipped] }),
      iterationLine(2, { critic_decision: 'DONE', feedback: null }),
      endLine({ iterations: 2 }),
    ];
    const dir = tempDir();
    const id = writeSession(dir, lines);
    const at = '2025-01-27T15:31:00Z';
    const events: RunEvent[] = [
      { type: 'protected_change', iteration: 1, change: skipped, status: 'weakening', timestamp: at },
      { type: 'protected_change', iteration: 1, change: removed, status: 'allowed', timestamp: at },
      { type: 'done_refused', iteration: 1, failed_checks: [], protected_changes: [skipped], timestamp: at },
      { type: 'protected_change', iteration: 2, change: skipped, status: 'accepted', reason: 'flaky', timestamp: at },
    ];
    const sidecar = tempDir('sidecar-');
    fs.writeFileSync(path.join(sidecar, EVENTS_FILE), events.map((event) => JSON.stringify(event)).join('\n') + '\n');
    const library = new SessionLibrary(new SessionStore(dir), () => sidecar);
    const standing = async () =>
      (await library.view(id)).iterations.map((each) => each.protected_standing.map((one) => [one.change.file, one.status, one.reason]));

    const [first, second] = (await library.view(id)).iterations;
    assert.deepEqual(first!.done_refused, { failed_checks: [], protected_changes: [skipped] }, 'from the record: the advisory lint did not refuse it');
    assert.equal(second!.done_refused, null);
    assert.deepEqual(await standing(), [
      [
        ['test/sum.test.js', 'weakening', null],
        ['test/old.test.js', 'allowed', null],
      ],
      [['test/sum.test.js', 'accepted', 'flaky']],
    ]);

    // Accepted since the run: the first iteration's weakening shows as the next judgement will see it; taken back, it refuses again.
    appendReviewRecord(sidecar, { type: 'change_accepted', iteration: 1, file: 'test/sum.test.js', kinds: ['skip_added'], reason: 'tracked in #12' });
    assert.deepEqual((await standing())[0]![0], ['test/sum.test.js', 'accepted', 'tracked in #12']);
    appendReviewRecord(sidecar, { type: 'acceptance_undone', file: 'test/sum.test.js' });
    assert.deepEqual(await standing(), [
      [
        ['test/sum.test.js', 'weakening', null],
        ['test/old.test.js', 'allowed', null],
      ],
      [['test/sum.test.js', 'weakening', null]],
    ]);

    // Without a record, the line says what was weakened and why DONE was refused.
    const bare = new SessionLibrary(new SessionStore(dir), () => tempDir('no-sidecar-'));
    const [alone] = (await bare.view(id)).iterations;
    assert.deepEqual(alone!.protected_standing, [{ change: skipped, status: 'weakening', reason: null }]);
    assert.deepEqual(alone!.done_refused, { failed_checks: ['lint'], protected_changes: [skipped] });
  });

  it('carries each iteration’s checklist of requirements as the critic judged it, and the ones that refused DONE', async () => {
    const status = (id: string, met: boolean, confirmed: string | null) => ({
      id,
      text: `${id} text`,
      met,
      evidence: `${id} evidence`,
      confirmed_by: confirmed,
    });
    const first = [status('REQ1', true, 'check tests passed'), status('REQ2', false, null)];
    const second = [status('REQ1', true, 'check tests passed'), status('REQ2', true, 'src/a.js:2')];
    const dir = tempDir();
    const id = writeSession(dir, [
      startLine(),
      iterationLine(1, { critic_verdict: 'DONE', unmet_requirements: [first[1]!] }),
      iterationLine(2, { critic_decision: 'DONE', feedback: null }),
      endLine({ iterations: 2 }),
    ]);
    const at = '2025-01-27T15:31:00Z';
    const events: RunEvent[] = [
      { type: 'requirements', iteration: 1, source: 'task', requirements: first, timestamp: at },
      { type: 'done_refused', iteration: 1, failed_checks: [], unmet_requirements: ['REQ2'], timestamp: at },
      { type: 'requirements', iteration: 2, source: 'task', requirements: second, timestamp: at },
    ];
    const sidecar = tempDir('sidecar-');
    fs.writeFileSync(path.join(sidecar, EVENTS_FILE), events.map((event) => JSON.stringify(event)).join('\n') + '\n');
    const [one, two] = (await new SessionLibrary(new SessionStore(dir), () => sidecar).view(id)).iterations;
    assert.deepEqual(one!.requirements, { source: 'task', requirements: first });
    assert.deepEqual(one!.done_refused?.unmet_requirements, ['REQ2']);
    assert.deepEqual(two!.requirements, { source: 'task', requirements: second });
    assert.equal(two!.done_refused, null);
  });
});
