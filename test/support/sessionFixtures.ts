import fs from 'node:fs';
import path from 'node:path';
import type { RunEventOf } from '../../src/sessionFormat/runEvents.js';
import { promptHash, fileTimestamp } from '../../src/sessionFormat/sessionFiles.js';

/** Session lines as any writer of the documented format would produce them. */
export function startLine(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'session_start',
    timestamp: '2025-01-27T15:30:45Z',
    prompt: 'Fix the typo',
    working_dir: '/home/user/myapp',
    actor_agent: 'Claude Code',
    critic_agent: 'Claude Code',
    actor_model: null,
    critic_model: null,
    max_iterations: 10,
    ...overrides,
  };
}

export function iterationLine(number: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'iteration',
    iteration_number: number,
    actor_output: `output ${number}`,
    actor_stderr: '',
    actor_exit_code: 0,
    actor_duration_secs: 10.5,
    git_diff: `diff --git a/f${number} b/f${number}\n`,
    git_files_changed: 1,
    critic_decision: 'CONTINUE',
    feedback: `feedback ${number}`,
    timestamp: '2025-01-27T15:31:30Z',
    ...overrides,
  };
}

export function endLine(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'session_end',
    outcome: 'success',
    iterations: 1,
    summary: 'Fixed',
    confidence: 0.9,
    duration_secs: 42,
    timestamp: '2025-01-27T15:32:14Z',
    ...overrides,
  };
}

/** A loop's last run event, as its runner sends it. */
export function runFinishedEvent(overrides: Partial<RunEventOf<'run_finished'>> = {}): RunEventOf<'run_finished'> {
  return {
    type: 'run_finished',
    status: 'interrupted',
    iterations: 0,
    summary: null,
    confidence: null,
    error: null,
    error_code: null,
    stop_reason: null,
    total_cost_usd: null,
    total_tokens: 0,
    cost_estimated: false,
    total_duration_secs: 1,
    session_id: 'x',
    session_file: 'x',
    verification: null,
    timestamp: '2025-01-27T15:32:14Z',
    ...overrides,
  };
}

/** Writes a session file named as the runner would; `raw` strings are written as they are. */
export function writeSession(dir: string, lines: Array<Record<string, unknown> | { raw: string }>, id?: string): string {
  const start = lines[0] && !('raw' in lines[0]) ? lines[0] : startLine();
  const sessionId = id ?? `${fileTimestamp(new Date(String(start.timestamp)))}_${promptHash(String(start.prompt))}`;
  fs.mkdirSync(dir, { recursive: true });
  const text = lines.map((line) => ('raw' in line ? line.raw : JSON.stringify(line) + '\n')).join('');
  fs.writeFileSync(path.join(dir, `${sessionId}.jsonl`), text);
  return sessionId;
}
