import assert from 'node:assert/strict';
import { buildTimeline } from '../../src/replay/timeline.js';
import { checkGate } from '../../src/loop/checkGate.js';
import { describeEvent, describeTimelineEntry, failingRequiredChecksText, oneLine, stopReasonText } from '../../src/sessionFormat/eventWording.js';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';
import { iterationLineSchema, sessionStartLineSchema, STOP_REASONS } from '../../src/sessionFormat/sessionLines.js';
import { PROTECTED_CHANGE_KINDS, protectedKindText } from '../../src/sessionFormat/verification.js';
import { assembleSessionView } from '../../src/sessionView/sessionViewBuilder.js';
import { iterationLine, startLine } from '../support/sessionFixtures.js';

const at = '2025-01-27T15:30:45Z';
/** An actor run that ended well, after 75 s, with its usage. */
const finished = {
  type: 'agent_finished',
  iteration: 1,
  role: 'actor',
  exit_code: 0,
  duration_secs: 75,
  succeeded: true,
  failure_reason: null,
  timed_out: false,
  interrupted: false,
  agent_session_id: null,
  usage: { inputTokens: 1500, outputTokens: 500, costUsd: 0.0123 },
  tool_calls: 1,
  timestamp: at,
} as const;
/** The critic asks for more, with one issue left. */
const carryOn: RunEvent = {
  type: 'critic_decision',
  iteration: 1,
  decision: 'CONTINUE',
  feedback: 'Add tests',
  summary: null,
  confidence: null,
  remaining_issues: ['no tests'],
  source: 'block',
  critic_output: '',
  timestamp: at,
};
const text = (event: RunEvent, showAgentText = true) => describeEvent(event, { showAgentText }).map((line) => `${line.tone}: ${line.text}`);

describe('run events as text (the terminal and the output channel)', () => {
  it('opens with the session, its agents and its limit', () => {
    assert.deepEqual(
      text({
        type: 'run_started',
        session_id: 's1',
        session_file: '/f',
        prompt: 'p',
        working_dir: '/repo',
        actor_agent: 'Claude Code',
        critic_agent: 'OpenCode',
        actor_model: 'opus',
        critic_model: null,
        max_iterations: null,
        timestamp: at,
      }),
      ['heading: Session s1', 'muted: actor Claude Code (opus) · critic OpenCode · no iteration limit', 'muted: in /repo'],
    );
  });

  it('streams the actor’s text (when asked) and every tool call, never the critic’s thinking', () => {
    assert.deepEqual(text({ type: 'agent_event', iteration: 1, role: 'actor', event: { kind: 'text', text: 'line one\nline two' }, timestamp: at }), [
      'agent:   line one\n  line two',
    ]);
    assert.deepEqual(text({ type: 'agent_event', iteration: 1, role: 'actor', event: { kind: 'text', text: 'hidden' }, timestamp: at }, false), []);
    assert.deepEqual(text({ type: 'agent_event', iteration: 1, role: 'critic', event: { kind: 'text', text: 'thinking' }, timestamp: at }), []);
    assert.deepEqual(
      text({ type: 'agent_event', iteration: 1, role: 'critic', event: { kind: 'tool_use', name: 'Bash', summary: 'npm test' }, timestamp: at }),
      ['muted:   → Bash: npm test'],
    );
  });

  it('says how each agent run ended, with its cost and tokens', () => {
    assert.deepEqual(text(finished), ['muted: actor finished in 1m 15s, exit 0, $0.0123, 2k tokens']);
    assert.deepEqual(text({ ...finished, succeeded: false, exit_code: 137, failure_reason: 'timed out after 60 s and was stopped' }), [
      'error: actor failed after 1m 15s, exit 137, $0.0123, 2k tokens: timed out after 60 s and was stopped',
    ]);
  });

  it('summarises the diff and the verdict, and ends with the outcome and the session file', () => {
    assert.deepEqual(
      text({
        type: 'diff_captured',
        iteration: 1,
        files_changed: 2,
        insertions: 10,
        deletions: 1,
        files: [
          { path: 'a.ts', status: 'modified', insertions: 9, deletions: 1 },
          { path: 'b.ts', oldPath: 'old.ts', status: 'renamed', insertions: 1, deletions: 0 },
        ],
        truncated: false,
        timestamp: at,
      }),
      ['info: diff: 2 files changed, +10 −1', 'muted:   M a.ts', 'muted:   R old.ts → b.ts'],
    );
    assert.deepEqual(text(carryOn), ['warning: critic: CONTINUE', 'agent:   Add tests', 'agent:   - no tests']);
    assert.deepEqual(
      text({
        type: 'run_finished',
        status: 'failed',
        iterations: 2,
        summary: null,
        confidence: null,
        error: 'the actor failed',
        error_code: 'actor_failed',
        stop_reason: null,
        total_cost_usd: 1.5,
        total_tokens: 120_000,
        cost_estimated: false,
        total_duration_secs: 3700,
        session_id: 's',
        session_file: '/s.jsonl',
        verification: null,
        timestamp: at,
      }),
      ['error: ✗ Failed after 2 iterations (1h 1m): the actor failed', 'muted: used $1.50, 120k tokens', 'muted: session: /s.jsonl'],
    );
  });
});

describe('one wording for every surface (sessionFormat/eventWording.ts)', () => {
  const session = {
    id: 's1',
    filePath: '/s1.jsonl',
    start: sessionStartLineSchema.parse(startLine()),
    iterations: [],
    end: null,
    warnings: [],
  };
  const moves: RunEvent[] = [
    { type: 'rollback', rollback: 1, to_iteration: 2, restored: ['a.ts'], removed: ['b.ts'], overwritten: [], before_ref: 'r', timestamp: at },
    { type: 'rollback_undone', rollback: 1, restored: ['a.ts', 'b.ts'], removed: ['c.ts'], overwritten: [], timestamp: at },
    { type: 'applied', apply: 1, target_dir: '/repo', restored: ['a.ts'], removed: [], overwritten: [], before_ref: 'r', timestamp: at },
    { type: 'apply_undone', apply: 1, restored: ['a.ts'], removed: [], overwritten: [], timestamp: at },
    { type: 'imported', bundle: 'b.tar.gz', from_working_dir: '/ci', timestamp: at },
    { type: 'stall', iteration: 3, action: 'nudge', reason: 'the diff did not change', since_iteration: 2, timestamp: at },
    {
      type: 'worktree_prepared',
      worktree: '/w/claude',
      copied: ['.env'],
      not_found: [],
      setup: { command: 'npm ci', passed: true, exit_code: 0, duration_secs: 3, timed_out: false, output: '', output_chars: 0 },
      timestamp: at,
    },
  ];
  /** What `codeloops sessions replay` prints after an entry's time and iteration. */
  const replayed = (events: RunEvent[]) =>
    buildTimeline(session, events)
      .slice(1)
      .map((entry) => oneLine(describeTimelineEntry(entry)));
  const live = (event: RunEvent) => oneLine(describeEvent(event, { showAgentText: false }));

  it('says "rollback N undone" (and every other move) in the same words in the live log, the replay and the viewer', () => {
    assert.equal(live(moves[1]!), 'rollback 1 undone: 3 files put back');
    assert.deepEqual(replayed(moves), moves.map(live));
    const notes = assembleSessionView(session, [], moves).notes;
    assert.deepEqual(
      notes.map((note) => note.text),
      moves.map(live),
    );
    assert.deepEqual(
      notes.map((note) => note.kind),
      ['rollback', 'rollback_undone', 'applied', 'apply_undone', 'imported', 'stall', 'worktree_prepared'],
    );
  });

  it('says a refused DONE’s one failing check in the singular and two in the plural, in the live log, the replay and the viewer’s box', () => {
    const refused = (failed_checks: string[]): RunEvent => ({ type: 'done_refused', iteration: 1, failed_checks, timestamp: at });
    const events = [refused(['npm test']), refused(['lint', 'npm test'])];
    assert.deepEqual(events.map(live), ['DONE refused: the required check npm test fails', 'DONE refused: the required checks lint, npm test fail']);
    assert.deepEqual(replayed(events), events.map(live));
    assert.equal(failingRequiredChecksText(['npm test']), 'the required check npm test fails');
    assert.equal(failingRequiredChecksText(['lint', 'npm test']), 'the required checks lint, npm test fail');
  });

  it('says a refused DONE’s weakenings, what stopped a loop and the end of a pause for an answer in words, never in the record’s codes', () => {
    const done = { kind: 'DONE', summary: 'All tests pass', confidence: 0.9 } as const;
    for (const kind of PROTECTED_CHANGE_KINDS) {
      const gate = checkGate(done, [], { weakened: [{ file: 'test/sum.test.js', kind, detail: 'x' }], unverified: null });
      assert.deepEqual(gate.decision.kind === 'CONTINUE' && gate.decision.remainingIssues, [
        `restore test/sum.test.js (${protectedKindText(kind)}) or justify the change`,
      ]);
    }
    assert.equal(protectedKindText('skip_added'), 'a test skipped');
    for (const reason of STOP_REASONS) assert.doesNotMatch(stopReasonText(reason), /_|^(duration|stalled)$/, reason);
    assert.equal(stopReasonText('needs_input'), 'a question only you can answer');
    assert.equal(stopReasonText('a_newer_reason'), 'a_newer_reason', 'a reason a newer writer gives is shown as written');
    // The answer to a question ends its pause as a review's end does: neither is called a review.
    const resumed = (action: 'continue' | 'stop'): RunEvent => ({ type: 'review_resumed', iteration: 1, action, paused_secs: 2, timestamp: at });
    assert.deepEqual([live(resumed('continue')), live(resumed('stop'))], ['carrying on', 'stopping the loop']);
  });

  it('replays the steps of an iteration under the live log’s headlines', () => {
    const steps: RunEvent[] = [
      { type: 'phase', iteration: 1, phase: 'actor', status: 'started', timestamp: at },
      { type: 'agent_event', iteration: 1, role: 'actor', event: { kind: 'tool_use', name: 'Bash', summary: 'npm test' }, timestamp: at },
      finished,
      {
        type: 'diff_captured',
        iteration: 1,
        files_changed: 1,
        insertions: 2,
        deletions: 0,
        files: [{ path: 'a.ts', status: 'added', insertions: 2, deletions: 0 }],
        truncated: false,
        timestamp: at,
      },
      {
        type: 'check_finished',
        iteration: 1,
        name: 'test',
        command: 'npm test',
        required: true,
        passed: false,
        exit_code: 1,
        duration_secs: 2,
        timed_out: false,
        output: '1 failing',
        output_chars: 9,
        tree: 't',
        timestamp: at,
      },
      {
        type: 'check_finished',
        iteration: 1,
        name: 'holdout',
        command: 'sh ~/acceptance/spec.sh',
        required: true,
        passed: true,
        exit_code: 0,
        duration_secs: 3,
        timed_out: false,
        output: 'ok',
        output_chars: 2,
        tree: 't',
        when: 'done',
        hidden: true,
        isolated: true,
        timestamp: at,
      },
      { ...carryOn, remaining_issues: [] },
      { type: 'done_refused', iteration: 1, failed_checks: ['test'], timestamp: at },
      { type: 'review_paused', iteration: 1, timestamp: at },
      { type: 'warning', message: 'something odd', timestamp: at },
    ];
    const headline = (lines: { text: string }[]) => lines[0]?.text.trim();
    const entries = buildTimeline(session, steps).slice(1);
    assert.deepEqual(
      entries.map((entry) => headline(describeTimelineEntry(entry))),
      steps.map((event) => headline(describeEvent(event, { showAgentText: false }))),
    );
    assert.deepEqual(
      entries.map((entry) => oneLine(describeTimelineEntry(entry))),
      [
        'actor working…',
        '→ Bash: npm test',
        'actor finished in 1m 15s, exit 0, $0.0123, 2k tokens',
        'diff: 1 file changed, +2 −0 — A a.ts',
        // The end of a failed check's output, as the live log shows it; an acceptance check's command, the user's to read.
        'check test: failed (exit 1) in 2.0s — 1 failing',
        'check holdout (acceptance: hidden from the agents, at DONE, in a clean worktree): passed in 3.0s — $ sh ~/acceptance/spec.sh',
        'critic: CONTINUE — Add tests',
        'DONE refused: the required check test fails',
        'paused for review after iteration 1: comment, reject hunks, then continue',
        'warning: something odd',
      ],
    );
  });

  it('words what only a replay has: the prompt, a decision recorded in other words, a diff recorded since HEAD, the user’s review', () => {
    const original = {
      ...session,
      iterations: [iterationLineSchema.parse(iterationLine(0, { critic_decision: 'DONE', critic_decision_text: 'DONE (confidence: 95%)', feedback: null }))],
    };
    const lines = buildTimeline(
      original,
      [],
      [{ type: 'comment', id: 'U1', iteration: 0, file: 'a.ts', line: 3, end_line: null, text: 'name this\nbetter', timestamp: at }],
    ).map((entry) => oneLine(describeTimelineEntry(entry)));
    assert.deepEqual(lines, [
      'Session s1 — Fix the typo · actor Claude Code · critic Claude Code · max 10 iterations · in /home/user/myapp',
      'your comment U1 on a.ts:3 — name this better',
      'actor finished (10.5s)',
      'diff: 1 file changed since HEAD (recorded whole by the original codeloops, not the iteration’s own)',
      'critic: DONE (recorded as "DONE (confidence: 95%)")',
    ]);
  });
});
