import assert from 'node:assert/strict';
import { sessionSummarySchema } from '../../src/sessionFormat/sessionSummaries.js';
import { timelineEntrySchema } from '../../src/sessionFormat/timelineEntries.js';
import { runCli, stopCliRuns } from '../support/cliProcess.js';
import { ORIGINAL_SESSIONS, writeOriginalSessions } from '../support/originalSessions.js';
import { createRepo, isolateHome, removeTempDirs, type IsolatedHome } from '../support/testEnvironment.js';

/**
 * A folder of sessions written as the original codeloops' writer wrote them
 * (test/support/originalSessions.ts), read through the built CLI as its users would.
 */
describe("the original codeloops' own session files, read in full", () => {
  let home: IsolatedHome;
  let cwd: string;
  const cli = (...args: string[]) => runCli(args, { cwd, env: home.env });
  before(() => {
    home = isolateHome();
    home.restore();
    writeOriginalSessions(home.sessionsDir);
    cwd = createRepo();
  });
  afterEach(stopCliRuns);
  after(removeTempDirs);

  it('lists every session with its outcome and the number of iterations it ran, without a warning', async () => {
    const result = await cli('sessions', 'list', '--json');
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '', 'nothing is unreadable');
    const summaries = (JSON.parse(result.stdout) as unknown[]).map((summary) => sessionSummarySchema.parse(summary));
    assert.deepEqual(
      summaries.map((summary) => [summary.id, summary.outcome, summary.iterations, summary.duration_secs, summary.actor_agent, summary.critic_agent]),
      [
        [ORIGINAL_SESSIONS.crashed.id, null, 4, null, 'Claude Code', 'Claude Code'],
        [ORIGINAL_SESSIONS.failed.id, 'failed', 2, 120, 'Claude Code', 'Claude Code'],
        [ORIGINAL_SESSIONS.interrupted.id, 'interrupted', 1, 75, 'OpenCode', 'Cursor'],
        [ORIGINAL_SESSIONS.success.id, 'success', 3, 180, 'Claude Code', 'Claude Code'],
      ],
    );
    assert.equal(summaries[3]!.timestamp, '2026-01-28T09:15:00.123456789Z', 'the timestamp as written');
    const text = await cli('sessions', 'list');
    assert.match(text.stdout, new RegExp(`${ORIGINAL_SESSIONS.crashed.id} +running/crashed +4 `));
    assert.match(text.stdout, new RegExp(`${ORIGINAL_SESSIONS.interrupted.id} +interrupted +1 `));
  });

  it('shows every iteration, numbered from 0, its decision mapped and its own words kept; the error of a failed one', async () => {
    const result = await cli('sessions', 'show', ORIGINAL_SESSIONS.success.id);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    assert.match(result.stdout, /actor +Claude Code\n +critic +Claude Code \(opus\)/);
    assert.match(result.stdout, /outcome +success after 3 iteration\(s\), 3m 0s/);
    assert.match(result.stdout, /Iteration 0 {2}CONTINUE \(recorded as "CONTINUE \(2 issues\)"\) {2}actor 1m 2s, exit 0, 1 file\(s\) changed since HEAD/);
    assert.match(
      result.stdout,
      /Iteration 1 {2}ERROR {2}actor 45\.0s, exit 0, 2 file\(s\) changed since HEAD .*\n {2}Error encountered: cargo test failed to compile\n {2}\n {2}Recovery suggestion: add the missing import/,
    );
    assert.match(result.stdout, /Iteration 2 {2}DONE \(recorded as "DONE \(confidence: 95%\)"\)/);
    assert.doesNotMatch(result.stdout, /warning/);

    const failed = await cli('sessions', 'show', ORIGINAL_SESSIONS.failed.id);
    assert.match(failed.stdout, /outcome +failed after 2 iteration\(s\), 2m 0s\n +error +Actor failed twice: exit code 101\n/);
    assert.doesNotMatch(failed.stdout, /summary +Actor failed/, 'said once, as the error');
    assert.match(failed.stdout, /Iteration 0 {2}ERROR \(recorded as "fail"\)/);
    assert.match(failed.stdout, /Iteration 1 {2}ERROR \(recorded as "FAIL"\)/);

    const json = JSON.parse((await cli('sessions', 'show', ORIGINAL_SESSIONS.crashed.id, '--json')).stdout);
    assert.deepEqual(
      json.iterations.map((line: { iteration_number: number; critic_decision: string; critic_decision_text: string }) => [
        line.iteration_number,
        line.critic_decision,
        line.critic_decision_text,
      ]),
      [
        [0, 'DONE', 'Approved'],
        [1, 'DONE', 'approve'],
        [2, 'DONE', 'APPROVE'],
        [3, 'DONE', 'approved'],
      ],
    );
    assert.equal(json.end, null);
    const interrupted = JSON.parse((await cli('sessions', 'show', ORIGINAL_SESSIONS.interrupted.id, '--json')).stdout);
    assert.equal(interrupted.end.outcome, 'interrupted');
    assert.deepEqual([interrupted.iterations[0].critic_decision, interrupted.iterations[0].critic_decision_text], ['CONTINUE', 'continue']);
  });

  it('prints each recorded diff, saying it is the whole change since HEAD, iteration 0 included', async () => {
    const all = await cli('sessions', 'diff', ORIGINAL_SESSIONS.success.id);
    assert.equal(all.code, 0, all.stderr);
    const headers = all.stdout.split('\n').filter((line) => line.startsWith('# iteration'));
    assert.deepEqual(
      headers,
      [0, 1, 2].map((n) => `# iteration ${n} (the whole change since HEAD, as the original codeloops recorded it; not the iteration’s own)`),
    );
    const first = await cli('sessions', 'diff', ORIGINAL_SESSIONS.success.id, '--iteration', '0');
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^diff --git a\/src\/cart\.rs b\/src\/cart\.rs\n/);
    assert.match(first.stderr, /^note: iteration 0's diff is the whole change since HEAD at that point/);
  });

  it('counts them in the stats', async () => {
    const stats = JSON.parse((await cli('sessions', 'stats', '--json')).stdout);
    assert.equal(stats.total_sessions, 4);
    assert.equal(stats.success_rate, 0.25);
    assert.equal(stats.avg_iterations, (4 + 2 + 1 + 3) / 4);
    assert.equal(stats.avg_duration_secs, (120 + 75 + 180) / 3);
    assert.deepEqual(stats.by_project, [{ project: 'shop', total: 4, success_rate: 0.25 }]);
  });

  it('replays every iteration from the three line types', async () => {
    const result = await cli('sessions', 'replay', ORIGINAL_SESSIONS.success.id, '--json');
    assert.equal(result.code, 0, result.stderr);
    const entries = result.stdout
      .trim()
      .split('\n')
      .map((text) => timelineEntrySchema.parse(JSON.parse(text)));
    const verdicts = entries.filter((entry) => entry.kind === 'verdict');
    assert.deepEqual(
      verdicts.map((entry) => entry.kind === 'verdict' && [entry.iteration, entry.decision, entry.decision_text]),
      [
        [0, 'CONTINUE', 'CONTINUE (2 issues)'],
        [1, 'ERROR', null],
        [2, 'DONE', 'DONE (confidence: 95%)'],
      ],
    );
    assert.ok(entries.every((entry) => entry.kind !== 'diff' || entry.since_head));
    const ended = entries.at(-1)!;
    assert.ok(ended.kind === 'session_ended' && ended.offset_secs === 180.077, JSON.stringify(ended));
    const text = await cli('sessions', 'replay', ORIGINAL_SESSIONS.success.id);
    assert.match(text.stdout, /it 0 +diff: 1 file changed since HEAD \(recorded whole by the original codeloops/);
    assert.match(text.stdout, /it 2 +critic: DONE \(recorded as "DONE \(confidence: 95%\)"\)/);
  });
});
