import { createHash } from 'node:crypto';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  iterationLineSchema,
  sessionEndLineSchema,
  sessionStartLineSchema,
  type IterationLine,
  type SessionEndLine,
  type SessionStartLine,
} from '../../src/sessionFormat/sessionLines.js';

export interface ValidSessionFile {
  /** Every line as JSON. */
  lines: Record<string, unknown>[];
  start: SessionStartLine;
  iterations: IterationLine[];
  end: SessionEndLine | null;
}

/** Each line's documented fields, in the documented order (the session format's schemas), written out here apart from the code under test. */
export const DOCUMENTED_FIELDS = {
  session_start: ['type', 'timestamp', 'prompt', 'working_dir', 'actor_agent', 'critic_agent', 'actor_model', 'critic_model', 'max_iterations'],
  iteration: [
    'type',
    'iteration_number',
    'actor_output',
    'actor_stderr',
    'actor_exit_code',
    'actor_duration_secs',
    'git_diff',
    'git_files_changed',
    'critic_decision',
    'feedback',
    'timestamp',
  ],
  session_end: ['type', 'outcome', 'iterations', 'summary', 'confidence', 'duration_secs', 'timestamp'],
} as const;

/** The documented fields first, in the documented order, then any extra fields: never a documented one among or after the extras. */
export function assertDocumentedFieldOrder(line: Record<string, unknown>, where: string): void {
  const documented = DOCUMENTED_FIELDS[line.type as keyof typeof DOCUMENTED_FIELDS] as readonly string[];
  const keys = Object.keys(line);
  assert.deepEqual(keys.slice(0, documented.length), [...documented], `${where}: the documented fields first, in order (${keys.join(', ')})`);
}

/**
 * Checks a session file against the documented format, line by line, as strictly as
 * the documentation reads: every documented field present with its documented type,
 * `critic_decision` exactly DONE/CONTINUE/ERROR, `feedback` null exactly for DONE,
 * iterations numbered from 1 (or on from `resumed_after_iteration`), `session_start` first and `session_end` (if any) last,
 * the file name `<timestamp>_<6 hex of sha256(prompt)>.jsonl`. Extra fields are allowed,
 * after the documented ones (which come in the documented order).
 */
export function assertValidSessionFile(filePath: string): ValidSessionFile {
  const name = path.basename(filePath);
  assert.match(name, /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z_[0-9a-f]{6}\.jsonl$/, `file name ${name}`);
  const text = fs.readFileSync(filePath, 'utf8');
  assert.ok(text.endsWith('\n'), 'the last line ends with a newline');
  const lines = text
    .slice(0, -1)
    .split('\n')
    .map((line, index) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        assert.fail(`line ${index + 1} is not JSON`);
      }
    });
  assert.ok(lines.length >= 1);
  const isoDate = (value: unknown, where: string) => {
    assert.equal(typeof value, 'string', `${where} is a string`);
    assert.match(value as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/, `${where} is ISO 8601 UTC`);
  };
  const nullableString = (value: unknown, where: string) => assert.ok(value === null || typeof value === 'string', `${where} is a string or null`);
  const integer = (value: unknown, where: string) => assert.ok(Number.isInteger(value), `${where} is an integer`);
  const number = (value: unknown, where: string) => assert.ok(typeof value === 'number' && Number.isFinite(value), `${where} is a number`);

  const start = lines[0]!;
  assert.equal(start.type, 'session_start', 'the first line is session_start');
  lines.forEach((line, index) => {
    if (Object.hasOwn(DOCUMENTED_FIELDS, line.type as string)) assertDocumentedFieldOrder(line, `line ${index + 1}`);
  });
  isoDate(start.timestamp, 'session_start.timestamp');
  for (const key of ['prompt', 'working_dir', 'actor_agent', 'critic_agent']) assert.equal(typeof start[key], 'string', `session_start.${key}`);
  assert.ok(path.isAbsolute(start.working_dir as string), 'working_dir is absolute');
  nullableString(start.actor_model, 'actor_model');
  nullableString(start.critic_model, 'critic_model');
  assert.ok(start.max_iterations === null || Number.isInteger(start.max_iterations), 'max_iterations');
  for (const key of ['actor_model', 'critic_model', 'max_iterations']) assert.ok(key in start, `session_start has ${key}`);
  assert.equal(
    name.slice(21, 27),
    createHash('sha256')
      .update(start.prompt as string)
      .digest('hex')
      .slice(0, 6),
    'hash of the prompt',
  );

  // A resumed session (`resumed_from`) carries on the numbering of the one it continues.
  if (start.resumed_from !== undefined) {
    assert.equal(typeof start.resumed_from, 'string', 'resumed_from is a session id');
    integer(start.resumed_after_iteration, 'resumed_after_iteration');
  }
  let expectedIteration = start.resumed_from === undefined ? 1 : (start.resumed_after_iteration as number) + 1;
  lines.slice(1).forEach((line, offset) => {
    const where = `line ${offset + 2}`;
    if (line.type === 'iteration') {
      assert.equal(line.iteration_number, expectedIteration, `${where}: iteration_number`);
      expectedIteration += 1;
      for (const key of ['actor_output', 'actor_stderr', 'git_diff']) assert.equal(typeof line[key], 'string', `${where}.${key}`);
      integer(line.actor_exit_code, `${where}.actor_exit_code`);
      number(line.actor_duration_secs, `${where}.actor_duration_secs`);
      integer(line.git_files_changed, `${where}.git_files_changed`);
      assert.ok(['DONE', 'CONTINUE', 'ERROR'].includes(line.critic_decision as string), `${where}.critic_decision is exact`);
      assert.ok('feedback' in line, `${where} has feedback`);
      if (line.critic_decision === 'DONE') assert.equal(line.feedback, null, `${where}: feedback is null for DONE`);
      else assert.equal(typeof line.feedback, 'string', `${where}: feedback is a string`);
      isoDate(line.timestamp, `${where}.timestamp`);
    } else if (line.type === 'session_end') {
      assert.equal(offset + 2, lines.length, 'session_end is the last line');
      assert.ok(['success', 'failed', 'interrupted', 'max_iterations_reached'].includes(line.outcome as string), `${where}.outcome`);
      integer(line.iterations, `${where}.iterations`);
      assert.equal(line.iterations, expectedIteration - 1, 'session_end.iterations is the last iteration number (the count, unless resumed)');
      nullableString(line.summary, `${where}.summary`);
      assert.ok(line.confidence === null || typeof line.confidence === 'number', `${where}.confidence`);
      for (const key of ['summary', 'confidence']) assert.ok(key in line, `session_end has ${key}`);
      number(line.duration_secs, `${where}.duration_secs`);
      isoDate(line.timestamp, `${where}.timestamp`);
    } else {
      assert.fail(`${where}: unexpected line type ${String(line.type)}`);
    }
  });
  // Checked above against the documentation itself; typed here for the tests' own assertions.
  return {
    lines,
    start: sessionStartLineSchema.parse(lines[0]),
    iterations: lines.filter((line) => line.type === 'iteration').map((line) => iterationLineSchema.parse(line)),
    end: lines.at(-1)?.type === 'session_end' ? sessionEndLineSchema.parse(lines.at(-1)) : null,
  };
}
