import fs from 'node:fs';
import path from 'node:path';

/**
 * Session files in the style the original codeloops' writer (Rust, early 2026)
 * really produced, which is not what its documentation says: iterations numbered
 * from 0; decisions as display text (`DONE (confidence: 95%)`, `CONTINUE (2 issues)`)
 * or other words in any case (`approved`, `fail`); `user_interrupted`; a failed
 * session's error in `summary`; error feedback as `Error encountered: …\n\nRecovery
 * suggestion: …`; nanosecond timestamps; floats written as `120.0`; display names as
 * agents; blank lines; no newline after the last line; and `git_diff` holding the
 * whole change since HEAD after each iteration. Written here by hand, line by line,
 * as text (so that `120.0` stays `120.0`).
 */

const line = (fields: string) => `{${fields}}`;
const start = (timestamp: string, prompt: string, actor = 'Claude Code', critic = 'Claude Code') =>
  line(
    `"type":"session_start","timestamp":"${timestamp}","prompt":${JSON.stringify(prompt)},"working_dir":"/home/dev/projects/shop","actor_agent":"${actor}","critic_agent":"${critic}","actor_model":null,"critic_model":"opus","max_iterations":10`,
  );
const iteration = (n: number, decision: string, feedback: string | null, diff: string, files: number, timestamp: string, duration = '45.0') =>
  line(
    `"type":"iteration","iteration_number":${n},"actor_output":"worked on it (${n})","actor_stderr":"","actor_exit_code":0,"actor_duration_secs":${duration},"git_diff":${JSON.stringify(diff)},"git_files_changed":${files},"critic_decision":${JSON.stringify(decision)},"feedback":${JSON.stringify(feedback)},"timestamp":"${timestamp}"`,
  );
const end = (outcome: string, iterations: number, summary: string | null, confidence: string, duration: string, timestamp: string) =>
  line(
    `"type":"session_end","outcome":"${outcome}","iterations":${iterations},"summary":${JSON.stringify(summary)},"confidence":${confidence},"duration_secs":${duration},"timestamp":"${timestamp}"`,
  );

const DIFF_CART = 'diff --git a/src/cart.rs b/src/cart.rs\n--- a/src/cart.rs\n+++ b/src/cart.rs\n@@ -1 +1,2 @@\n fn total() {}\n+fn discount() {}\n';
const DIFF_TESTS =
  'diff --git a/tests/cart.rs b/tests/cart.rs\nnew file mode 100644\n--- /dev/null\n+++ b/tests/cart.rs\n@@ -0,0 +1 @@\n+#[test] fn discounts() {}\n';

export interface OriginalSession {
  id: string;
  text: string;
}

/** The sessions, by what each shows. */
export const ORIGINAL_SESSIONS = {
  /** Three iterations from 0: a CONTINUE with a count, an error, then DONE with its summary as feedback; blank lines; no final newline. */
  success: {
    id: '2026-01-28T09-15-00Z_a1b2c3',
    text: [
      start('2026-01-28T09:15:00.123456789Z', 'Add a discount to the cart total'),
      '',
      iteration(0, 'CONTINUE (2 issues)', 'Two issues:\n1. no tests\n2. discount unused', DIFF_CART, 1, '2026-01-28T09:16:02.123456789Z', '62.0'),
      iteration(
        1,
        'ERROR',
        'Error encountered: cargo test failed to compile\n\nRecovery suggestion: add the missing import',
        DIFF_CART + DIFF_TESTS,
        2,
        '2026-01-28T09:17:00.5Z',
      ),
      '',
      '',
      iteration(2, 'DONE (confidence: 95%)', 'The discount is applied and tested.', DIFF_CART + DIFF_TESTS, 2, '2026-01-28T09:18:00.000000001Z', '30.0'),
      end('success', 3, 'The discount is applied and tested.', '0.95', '180.0', '2026-01-28T09:18:00.200000000Z'),
    ].join('\n'),
  },
  /** Stopped by the user after one round; lower-case words. */
  interrupted: {
    id: '2026-01-29T10-00-00Z_d4e5f6',
    text: [
      start('2026-01-29T10:00:00.000000000Z', 'Rename the cart module', 'OpenCode', 'Cursor'),
      iteration(0, 'continue', 'rename the tests too', DIFF_CART, 1, '2026-01-29T10:01:00.000000000Z'),
      end('user_interrupted', 1, null, 'null', '75.0', '2026-01-29T10:01:15.000000000Z'),
    ].join('\n'),
  },
  /** Failed: its error is in `summary`; `fail` and `FAIL` as decisions. */
  failed: {
    id: '2026-01-30T11-00-00Z_0a1b2c',
    text:
      [
        start('2026-01-30T11:00:00.999999999Z', 'Fix the flaky checkout test'),
        iteration(0, 'fail', 'the actor crashed', '', 0, '2026-01-30T11:01:00.000000000Z', '1.0'),
        iteration(1, 'FAIL', 'the actor crashed again', '', 0, '2026-01-30T11:02:00.000000000Z', '1.0'),
        end('failed', 2, 'Actor failed twice: exit code 101', 'null', '120.0', '2026-01-30T11:02:00.100000000Z'),
      ].join('\n') + '\n',
  },
  /** Never ended (the runner was killed): approve words in several cases; counted from 0. */
  crashed: {
    id: '2026-01-31T12-00-00Z_3c4d5e',
    text: [
      start('2026-01-31T12:00:00.000000000Z', 'Document the cart API', 'Claude Code', 'Claude Code'),
      iteration(0, 'Approved', null, DIFF_CART, 1, '2026-01-31T12:01:00.000000000Z'),
      iteration(1, 'approve', null, DIFF_CART, 1, '2026-01-31T12:02:00.000000000Z'),
      iteration(2, 'APPROVE', null, DIFF_CART, 1, '2026-01-31T12:03:00.000000000Z'),
      iteration(3, 'approved', 'looks good', DIFF_CART, 1, '2026-01-31T12:04:00.000000000Z'),
    ].join('\n'),
  },
} as const satisfies Record<string, OriginalSession>;

/** Writes every original-style session into a sessions folder. */
export function writeOriginalSessions(sessionsDir: string): void {
  fs.mkdirSync(sessionsDir, { recursive: true });
  for (const session of Object.values(ORIGINAL_SESSIONS)) fs.writeFileSync(path.join(sessionsDir, `${session.id}.jsonl`), session.text);
}
