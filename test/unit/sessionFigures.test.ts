import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { scanLongLineSync } from '../../src/sessions/longLine.js';
import { iterationLine } from '../support/sessionFixtures.js';
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
});
