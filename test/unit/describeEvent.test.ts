import assert from 'node:assert/strict';
import { describeEvent } from '../../src/loop/describeEvent.js';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';

const at = '2025-01-27T15:30:45Z';
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
    assert.deepEqual(
      text({
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
      }),
      ['warning: critic: CONTINUE', 'agent:   Add tests', 'agent:   - no tests'],
    );
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
        timestamp: at,
      }),
      ['error: ✗ Failed after 2 iterations (1h 1m): the actor failed', 'muted: used $1.50, 120k tokens', 'muted: session: /s.jsonl'],
    );
  });
});
