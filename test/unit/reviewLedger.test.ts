import assert from 'node:assert/strict';
import path from 'node:path';
import { itemIds, resolvedAmong, ReviewLedger } from '../../src/loop/reviewLedger.js';
import type { Finding } from '../../src/sessionFormat/reviewRecords.js';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';
import { appendReviewRecord } from '../../src/sessionWriter/reviewRecorder.js';
import { SidecarRecorder } from '../../src/sessionWriter/sidecarRecorder.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, second));

const finding = (id: string): Finding => ({ id, file: 'a.ts', line: 1, end_line: 1, severity: 'warning', message: `about ${id}`, anchored: true });

function verdictEvent(second: number, iteration: number, findings: Finding[], resolved: string[] = []): RunEvent {
  return {
    type: 'critic_decision',
    timestamp: at(second).toISOString(),
    iteration,
    decision: 'CONTINUE',
    feedback: 'more',
    summary: null,
    confidence: null,
    remaining_issues: [],
    source: 'block',
    critic_output: 'the critic’s whole answer',
    findings,
    resolved,
  };
}

const rejection = (id: string, iteration: number) =>
  ({ type: 'hunk_rejected', id, iteration, hunk: 1, file: 'a.ts', patch: '@@ -1 +1 @@', reason: null, before_ref: 'b', after_ref: 'a' }) as const;

describe('the review ledger: the review items a loop carries from one iteration to the next', () => {
  after(removeTempDirs);

  it('carries the open findings of the sessions it carries on, reads the user’s comments afresh, and tells a rejection once', async () => {
    const root = tempDir('codeloops-ledger-');
    const earlier = path.join(root, 'earlier');
    const own = path.join(root, 'own');
    const recorder = SidecarRecorder.open(earlier);
    recorder.record(verdictEvent(1, 1, [finding('F1.1'), finding('F1.2')]));
    recorder.record({ type: 'warning', timestamp: at(2).toISOString(), message: 'not about the review' });
    recorder.close();
    appendReviewRecord(earlier, { type: 'resolved', id: 'F1.2' }, at(3));

    const ledger = new ReviewLedger({ earlier: [earlier], own });
    assert.deepEqual(itemIds(await ledger.pending()), ['F1.1'], 'open from the session carried on; the one the user resolved is not');

    // The user comments and rejects a hunk from another process while the loop runs.
    appendReviewRecord(own, { type: 'comment', id: 'U2.1', iteration: 2, file: null, line: null, end_line: null, text: 'rename it' }, at(4));
    appendReviewRecord(own, rejection('R2.1', 2), at(5));
    const told = await ledger.pending();
    assert.deepEqual(itemIds(told), ['U2.1', 'R2.1', 'F1.1'], "read again each time, the user's first");

    ledger.note({ type: 'review_delivered', timestamp: at(6).toISOString(), iteration: 3, ids: itemIds(told) });
    ledger.note({ type: 'review_claimed', timestamp: at(7).toISOString(), iteration: 3, ids: ['F1.1'] });
    const forCritic = await ledger.openForCritic(told);
    assert.deepEqual(itemIds(forCritic), ['U2.1', 'R2.1', 'F1.1'], 'the critic checks the rejection the actor was told of');
    assert.equal(forCritic.findings[0]?.claimed, true, 'with what the actor says it addressed');

    ledger.note(verdictEvent(8, 3, [finding('F3.1')], ['F1.1', 'U2.1', 'R2.1', 'F9.9']));
    assert.deepEqual(
      resolvedAmong(['F1.1', 'U2.1', 'R2.1', 'F9.9'], forCritic),
      ['F1.1', 'U2.1'],
      'only open findings and comments are resolved by the critic',
    );
    assert.deepEqual(itemIds(await ledger.pending()), ['F3.1'], 'the rejection is told once; what the critic resolved is closed; its new finding is open');
  });
});
