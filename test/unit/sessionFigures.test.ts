import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { SessionStartLine } from '../../src/sessionFormat/sessionLines.js';
import { scanLongLineSync } from '../../src/sessions/longLine.js';
import { figuresOfFile, noFigures } from '../../src/sessions/sessionFigures.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

describe('skimming a line of megabytes for its short fields', () => {
  after(removeTempDirs);

  it('skips long values from quote to quote, escaped quotes and runs of backslashes included, wherever a slice of the file ends', () => {
    const file = path.join(tempDir(), 'line.jsonl');
    // Quotes and backslashes everywhere: their escapes make runs of backslashes before quotes, some across the 1 MB slices.
    const tricky = 'say "hi" \\ path\\to\\"x\\\\" end\\';
    for (const shift of [0, 1, 2, 3, 5, 8, 13]) {
      const output = `${'a'.repeat(shift)}${tricky.repeat(70_000)}"\\`;
      const line = {
        ...iterationLine(3, { actor_output: output, git_diff: `${tricky}${'+x\n'.repeat(400_000)}`, feedback: 'the "short" one \\o/' }),
        nested: { a: ['"]}'] },
      };
      fs.writeFileSync(file, JSON.stringify(line));
      const skimmed = scanLongLineSync(fs.openSync(file, 'r'), 0, fs.statSync(file).size, true);
      assert.ok(skimmed.ok, `shift ${shift}`);
      assert.deepEqual(skimmed.value, { ...line, actor_output: '', git_diff: '' }, `shift ${shift}`);
      assert.deepEqual([...skimmed.long.keys()].sort(), ['actor_output', 'git_diff']);
    }
    fs.writeFileSync(file, JSON.stringify(iterationLine(1, { actor_output: 'x'.repeat(2_000_000) })).slice(0, -10));
    assert.equal(scanLongLineSync(fs.openSync(file, 'r'), 0, fs.statSync(file).size, true).ok, false, 'a torn line is no line');
  });

  it('reads a session once for its figures, measuring a feedback of megabytes as the readers do', () => {
    const dir = tempDir();
    const feedback = `é🚀 "quoted" \\ ${'long feedback '.repeat(100_000)}`;
    const id = writeSession(dir, [
      startLine({ resumed_from: 'earlier' }),
      iterationLine(1, { feedback, actor_output: 'o'.repeat(3_000_000), critic_verdict: 'DONE' }),
      iterationLine(2, { critic_decision: 'DONE', feedback: null }),
      endLine({ iterations: 2, total_tokens: 1234 }),
    ]);
    const file = path.join(dir, `${id}.jsonl`);
    const firstLineEnd = fs.readFileSync(file).indexOf(0x0a) + 1;
    const start = JSON.parse(fs.readFileSync(file, 'utf8').split('\n')[0]!) as SessionStartLine;
    const figures = figuresOfFile(fs.openSync(file, 'r'), fs.statSync(file).size, firstLineEnd, start);
    assert.deepEqual(figures, {
      ...noFigures('earlier'),
      ...{ done: 1, continued: 1, critic_done: 2, done_refused: 1, improvements: 1, total_tokens: 1234 },
      ...{ feedback_chars: feedback.length, first_decision: 'CONTINUE', last_decision: 'DONE' },
    });
  });
});
