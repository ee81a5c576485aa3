import { endLine, iterationLine, startLine, writeSession } from './sessionFixtures.js';

/**
 * A sessions folder with known figures for `sessions stats`: eight sessions, six tasks
 * (one a chain of three sessions linked by `resumed_from`), two actor and critic
 * pairs. Every expected figure below is worked out by hand from these lines.
 *
 *   task  sessions            pair   iterations (feedback chars)              outcome
 *   T1    S1                  A      DONE                                     success, verified, $0.50, 1,000 tokens, 60 s
 *   T2    S2a → S2b → S2c     A      C(5) E(3) | C(10, DONE refused) | DONE   failed, interrupted, success (unverified); $2.00 and
 *                                                                            4,000 tokens recorded by S2c (the chain's totals); 100+50+30 s
 *   T3    S3                  B      C(6) C(4), a 2.5 MB actor output         max_iterations_reached, $0.25, 500 tokens, 80 s
 *   T4    S4                  B      C(4)                                     interrupted, no cost recorded, 20 s
 *   T5    S5                  A      C(8, DONE refused, 2.5 MB output) DONE   success, verified by the start's tests, $0.75, 1,500 tokens, 90 s
 *   T6    S6                  A      C(2)                                     running (no session_end)
 *
 * Pair A: Claude Code and Claude Code; pair B: Codex as actor, Claude Code as critic.
 */
export function writeStatsSessions(dir: string): { ids: Record<string, string> } {
  const big = 'x'.repeat(2.5 * 1024 * 1024);
  const codex = { actor_agent: 'Codex' };
  const at = (day: number) => `2025-03-0${day}T10:00:00Z`;
  const ids: Record<string, string> = {};
  ids.S1 = writeSession(dir, [
    startLine({ prompt: 'First try', timestamp: at(1), working_dir: '/w/shop' }),
    iterationLine(1, { critic_decision: 'DONE', feedback: null }),
    endLine({ iterations: 1, duration_secs: 60, total_cost_usd: 0.5, total_tokens: 1000, verification: 'verified' }),
  ]);
  ids.S2a = writeSession(dir, [
    startLine({ prompt: 'Chain task', timestamp: at(2), working_dir: '/w/shop' }),
    iterationLine(1, { feedback: 'abcde' }),
    iterationLine(2, { critic_decision: 'ERROR', feedback: 'xyz' }),
    endLine({ outcome: 'failed', iterations: 2, summary: null, duration_secs: 100, total_cost_usd: 1, total_tokens: 2000 }),
  ]);
  ids.S2b = writeSession(dir, [
    startLine({ prompt: 'Chain task', timestamp: at(3), working_dir: '/w/shop', resumed_from: ids.S2a, resumed_after_iteration: 2 }),
    iterationLine(3, { feedback: '0123456789', critic_verdict: 'DONE', failed_checks: ['test'] }),
    endLine({ outcome: 'interrupted', iterations: 3, summary: null, duration_secs: 50, total_cost_usd: 1.5, total_tokens: 3000 }),
  ]);
  ids.S2c = writeSession(dir, [
    startLine({ prompt: 'Chain task', timestamp: at(4), working_dir: '/w/shop', resumed_from: ids.S2b, resumed_after_iteration: 3 }),
    iterationLine(4, { critic_decision: 'DONE', feedback: null }),
    endLine({ iterations: 4, duration_secs: 30, total_cost_usd: 2, total_tokens: 4000, verification: 'unverified' }),
  ]);
  ids.S3 = writeSession(dir, [
    startLine({ prompt: 'At the limit', timestamp: at(5), working_dir: '/w/shop', max_iterations: 2, ...codex }),
    iterationLine(1, { feedback: 'fix it', actor_output: big }),
    iterationLine(2, { feedback: 'nope' }),
    endLine({ outcome: 'max_iterations_reached', iterations: 2, summary: null, duration_secs: 80, total_cost_usd: 0.25, total_tokens: 500 }),
  ]);
  ids.S4 = writeSession(dir, [
    startLine({ prompt: 'Interrupted', timestamp: at(6), working_dir: '/w/shop', ...codex }),
    iterationLine(1, { feedback: 'more' }),
    endLine({ outcome: 'interrupted', iterations: 1, summary: null, duration_secs: 20 }),
  ]);
  ids.S5 = writeSession(dir, [
    startLine({ prompt: 'Refused then done', timestamp: at(7), working_dir: '/w/shop' }),
    iterationLine(1, { feedback: '12345678', critic_verdict: 'DONE', actor_output: big, git_diff: big }),
    iterationLine(2, { critic_decision: 'DONE', feedback: null }),
    endLine({
      iterations: 2,
      duration_secs: 90,
      total_cost_usd: 0.75,
      total_tokens: 1500,
      verification: 'verified',
      verified_by: { start_tests: { passed: 12, flaky: 0 }, new_tests: 1, exit_code_checks: [], critic_commands: 0 },
    }),
  ]);
  ids.S6 = writeSession(dir, [startLine({ prompt: 'Still running', timestamp: at(8), working_dir: '/w/shop' }), iterationLine(1, { feedback: 'ab' })]);
  return { ids };
}

/** The figures of `writeStatsSessions`, unfiltered, each worked out by hand. */
export const EXPECTED_STATS = {
  // Per session, as before: 8 sessions, 3 successes (S1, S2c, S5).
  total_sessions: 8,
  success_rate: 3 / 8,
  // Each session's own count as its summary has it (a resumed one carries on the numbering): 1+2+3+4+2+1+2+1.
  avg_iterations: 16 / 8,
  // The seven that ended: 60+100+50+30+80+20+90.
  avg_duration_secs: 430 / 7,
  // Per task: T1…T6, successes T1, T2, T5.
  total_tasks: 6,
  task_success_rate: 3 / 6,
  // Only T1 took one iteration; T2 took four across its three sessions.
  first_try_success_rate: 1 / 3,
  avg_iterations_to_success: (1 + 4 + 2) / 3,
  // T1 60 s, T2 100+50+30 s, T5 90 s.
  avg_cycle_time_secs: (60 + 180 + 90) / 3,
  // T3 at the limit and T4 interrupted; T6 still runs and is no waste.
  waste_rate: 2 / 6,
  total_iterations: 1 + 4 + 2 + 1 + 2 + 1,
  // Recorded DONE: T1's, T2's last, T5's second. The refused DONEs were recorded CONTINUE.
  critic_approval_rate: 3 / 11,
  // Rejections (CONTINUE, ERROR): T2 5+3+10, T3 6+4, T4 4, T5 8, T6 2: 42 characters over 8.
  avg_feedback_length: 42 / 8,
  // T2's CONTINUE that ended S2b, then S2c's DONE; T5's CONTINUE then DONE.
  improvement_rate: 2 / 8,
  // T1 and T5 verified, T2 not.
  verified_success_rate: 2 / 3,
  // T5 alone of the three successes rested on the start's tests.
  tests_verified_success_rate: 1 / 3,
  // The critic said DONE 5 times (T1 1, T2 2, T5 2); the gate refused 2 of them.
  done_refused_rate: 2 / 5,
  // T1 0.50 + T2 2.00 (its last session's total carries the chain's) + T3 0.25 + T5 0.75; T4 and T6 recorded none.
  total_cost_usd: 3.5,
  cost_per_success_usd: 3.5 / 3,
  total_tokens: 1000 + 4000 + 500 + 1500,
};

/** `by_agents`, most tasks first. */
export const EXPECTED_BY_AGENTS = [
  {
    // T1, T2, T5, T6.
    actor_agent: 'Claude Code',
    critic_agent: 'Claude Code',
    total_tasks: 4,
    task_success_rate: 3 / 4,
    first_try_success_rate: 1 / 3,
    avg_iterations_to_success: 7 / 3,
    avg_cycle_time_secs: 110,
    waste_rate: 0,
    total_iterations: 8,
    critic_approval_rate: 3 / 8,
    // T2 18, T5 8, T6 2 over 5 rejections.
    avg_feedback_length: 28 / 5,
    improvement_rate: 2 / 5,
    verified_success_rate: 2 / 3,
    tests_verified_success_rate: 1 / 3,
    done_refused_rate: 2 / 5,
    total_cost_usd: 3.25,
    cost_per_success_usd: 3.25 / 3,
    total_tokens: 6500,
  },
  {
    // T3, T4: nothing succeeded, so every rate over successes is null; the critic never said DONE.
    actor_agent: 'Codex',
    critic_agent: 'Claude Code',
    total_tasks: 2,
    task_success_rate: 0,
    first_try_success_rate: null,
    avg_iterations_to_success: null,
    avg_cycle_time_secs: null,
    waste_rate: 1,
    total_iterations: 3,
    critic_approval_rate: 0,
    avg_feedback_length: 14 / 3,
    improvement_rate: 0,
    verified_success_rate: null,
    tests_verified_success_rate: null,
    done_refused_rate: null,
    total_cost_usd: 0.25,
    cost_per_success_usd: null,
    total_tokens: 500,
  },
];

/**
 * The figures of `writeStatsSessions` as both stats pages show them, tile by tile
 * (group class, label, text), each rounded by hand from the values above.
 */
export const EXPECTED_TILES: ReadonlyArray<readonly [group: string, label: string, shown: string]> = [
  ['group-sessions', 'Sessions', '8'],
  ['group-sessions', 'Success rate', '38%'], // 3/8 = 37.5 %
  ['group-sessions', 'Avg iterations', '2.0'],
  ['group-sessions', 'Avg duration', '1m 1s'], // 430/7 = 61.4 s
  ['group-tasks', 'Tasks', '6'],
  ['group-tasks', 'Task success rate', '50%'],
  ['group-tasks', 'First-try success', '33%'],
  ['group-tasks', 'Verified success', '67%'],
  ['group-tasks', 'By the start’s tests', '33%'],
  ['group-tasks', 'Waste rate', '33%'],
  ['group-tasks', 'Avg iterations to success', '2.3'],
  ['group-tasks', 'Avg cycle time', '1m 50s'], // 110 s
  ['group-critic', 'Iterations', '11'],
  ['group-critic', 'Approval rate', '27%'], // 3/11
  ['group-critic', 'DONE refused', '40%'],
  ['group-critic', 'Improvement rate', '25%'],
  ['group-critic', 'Avg feedback length', '5 chars'], // 42/8 = 5.25
  ['group-cost', 'Total cost', '$3.50'],
  ['group-cost', 'Cost per success', '$1.17'],
  ['group-cost', 'Tokens', '7k'],
];

/** The pairs' table as the pages show it: Actor, Critic, Tasks, Success, First try, Verified, Waste, Approval, DONE refused, Cost per success. */
export const EXPECTED_AGENT_ROWS = [
  ['Claude Code', 'Claude Code', '4', '75%', '33%', '67%', '0%', '38%', '40%', '$1.08'],
  ['Codex', 'Claude Code', '2', '0%', '—', '—', '100%', '0%', '—', '—'],
];
