import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { SessionWriter } from '../../src/sessionWriter/sessionWriter.js';
import { promptHash, sessionFilePath, isSessionId, timestampFromSessionId } from '../../src/sessionFormat/sessionFiles.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { assertValidSessionFile, DOCUMENTED_FIELDS } from '../support/sessionFormatCheck.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

const START = {
  prompt: 'Fix the typo in greeting.rs',
  working_dir: '/home/user/myapp',
  actor_agent: 'Claude Code',
  critic_agent: 'Claude Code',
  actor_model: null,
  critic_model: 'opus',
  max_iterations: 10,
};

const ITERATION = {
  iteration_number: 1,
  actor_output: "I found and fixed the typo. 'Helo' is now 'Hello'.",
  actor_stderr: '',
  actor_exit_code: 0,
  actor_duration_secs: 23.4,
  git_diff: 'diff --git a/src/greeting.rs b/src/greeting.rs\n',
  git_files_changed: 1,
  critic_decision: 'DONE' as const,
  feedback: 'ignored for DONE',
  git_insertions: 1,
  git_deletions: 1,
};

describe('session writer', () => {
  after(removeTempDirs);

  it('writes the documented three line types, field for field, under the documented name', () => {
    const dir = tempDir();
    const writer = SessionWriter.create(dir, START, new Date('2025-01-27T15:30:45.123Z'));
    assert.equal(writer.sessionId, `2025-01-27T15-30-45Z_${promptHash(START.prompt)}`);
    writer.writeIteration(ITERATION, new Date('2025-01-27T15:31:08Z'));
    writer.writeEnd({ outcome: 'success', iterations: 1, summary: 'Fixed', confidence: 1, duration_secs: 23.4 }, new Date('2025-01-27T15:31:08Z'));
    writer.close();
    const { lines } = assertValidSessionFile(writer.filePath);
    assert.deepEqual(Object.keys(lines[0]!), [...DOCUMENTED_FIELDS.session_start]);
    assert.deepEqual(Object.keys(lines[1]!), [...DOCUMENTED_FIELDS.iteration, 'git_insertions', 'git_deletions']);
    assert.equal(lines[1]!.feedback, null, 'DONE never carries feedback');
    assert.deepEqual(Object.keys(lines[2]!), [...DOCUMENTED_FIELDS.session_end]);
    assert.equal(lines[0]!.timestamp, '2025-01-27T15:30:45.123Z');
  });

  it('gives a second session with the same prompt in the same second the next free name', () => {
    const dir = tempDir();
    const at = new Date('2025-01-27T15:30:45Z');
    const first = SessionWriter.create(dir, START, at);
    const second = SessionWriter.create(dir, START, at);
    assert.notEqual(first.filePath, second.filePath);
    assert.equal(second.sessionId, `2025-01-27T15-30-46Z_${promptHash(START.prompt)}`);
    first.close();
    second.close();
    assert.equal(fs.readFileSync(first.filePath, 'utf8').split('\n').length, 2, 'the first file was not appended to');
  });

  it('refuses to write after session_end', () => {
    const writer = SessionWriter.create(tempDir(), START, new Date());
    writer.writeEnd({ outcome: 'interrupted', iterations: 0, summary: null, confidence: null, duration_secs: 1 });
    assert.throws(() => writer.writeIteration(ITERATION), /already ended/);
    writer.close();
  });

  it('round-trips emoji and every control character through the reader', async () => {
    const dir = tempDir();
    const prompt = 'Ünïcödé 🎉 "quotes" \\ back\nslash \u2028 \u0000 end';
    const writer = SessionWriter.create(dir, { ...START, prompt }, new Date());
    writer.writeIteration({ ...ITERATION, actor_output: '👨‍👩‍👧 done\r\n', critic_decision: 'CONTINUE', feedback: 'more ✨' });
    writer.close();
    const session = await new SessionStore(dir).load(writer.sessionId);
    assert.equal(session.start.prompt, prompt);
    assert.equal(session.iterations[0]!.actor_output, '👨‍👩‍👧 done\r\n');
    assert.equal(session.iterations[0]!.feedback, 'more ✨');
    assert.equal(session.end, null);
  });
});

describe('session ids', () => {
  it('accept plain file names only', () => {
    for (const good of ['2025-01-27T15-30-45Z_a3f2c1', 'abc', 'a.b-c_d']) assert.ok(isSessionId(good), good);
    for (const bad of ['', '..', '../x', 'a/b', 'a\\b', '.hidden', 'a..b', 'x\u0000', '%2e%2e', 'a b']) assert.ok(!isSessionId(bad), bad);
    assert.throws(() => sessionFilePath('/s', '../../etc/passwd'), /not a session id/);
  });

  it('carry their start time', () => {
    assert.equal(timestampFromSessionId('2025-01-27T15-30-45Z_a3f2c1')?.toISOString(), '2025-01-27T15:30:45.000Z');
    assert.equal(timestampFromSessionId('whatever'), undefined);
  });

  it('are named after the prompt hash of the documented example', () => {
    assert.equal(path.basename(sessionFilePath('/s', 'x')), 'x.jsonl');
    assert.equal(promptHash(''), 'e3b0c4');
  });
});
