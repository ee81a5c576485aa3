import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { AppendOnlyFile, cutTornTail } from '../../src/sessionWriter/appendOnlyFile.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

describe('appending to a file a crash may have left', () => {
  after(removeTempDirs);
  const file = (text: string) => {
    const filePath = path.join(tempDir('codeloops-append-'), 'session.jsonl');
    fs.writeFileSync(filePath, text);
    return filePath;
  };

  it('cuts a torn last line, so the next line is not glued to it', () => {
    const filePath = file('{"type":"session_start"}\n{"type":"iterat');
    const appender = AppendOnlyFile.openForAppend(filePath);
    appender.appendLine({ type: 'session_end' });
    appender.close();
    assert.equal(fs.readFileSync(filePath, 'utf8'), '{"type":"session_start"}\n{"type":"session_end"}\n');
  });

  it('keeps a whole last line that only lost its newline, and completes it', () => {
    const filePath = file('{"type":"session_start"}\n{"type":"iteration","iteration_number":1}');
    assert.equal(cutTornTail(filePath), 'completed');
    assert.equal(fs.readFileSync(filePath, 'utf8'), '{"type":"session_start"}\n{"type":"iteration","iteration_number":1}\n');
    assert.equal(cutTornTail(filePath), 'whole');
  });

  it('completes a first line without its newline, and refuses a file whose only line is torn, leaving it as it is', () => {
    const whole = file('{"type":"session_start"}');
    assert.equal(cutTornTail(whole), 'completed');
    assert.equal(fs.readFileSync(whole, 'utf8'), '{"type":"session_start"}\n');
    const torn = file('{"type":"sess');
    assert.throws(() => cutTornTail(torn), /holds only a torn line/);
    assert.equal(fs.readFileSync(torn, 'utf8'), '{"type":"sess');
  });

  it('finds the last newline behind a last line longer than one read', () => {
    const long = 'x'.repeat(200_000);
    const filePath = file(`{"a":1}\n{"b":"${long}`);
    assert.equal(cutTornTail(filePath), 'cut');
    assert.equal(fs.readFileSync(filePath, 'utf8'), '{"a":1}\n');
  });
});
