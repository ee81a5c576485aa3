import assert from 'node:assert/strict';
import { HeadTailBuffer } from '../../src/text/headTailBuffer.js';
import { LineSplitter } from '../../src/text/lineSplitter.js';
import { graphemeBoundaryAtOrBefore, previewLine, takeHead, takeTail, truncateMiddle } from '../../src/text/truncate.js';

/** True when the string holds no lone surrogate, i.e. no character was cut in half. */
function isWellFormed(text: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

describe('text cutting', () => {
  const family = '👨‍👩‍👧‍👦'; // one grapheme, 11 UTF-16 units
  const flag = '🇫🇷';

  it('never cuts inside an emoji, a ZWJ family, a flag or a combining mark', () => {
    const text = `ab${family}cd${flag}e\u0301f`;
    for (let cut = 0; cut <= text.length; cut++) {
      const head = takeHead(text, cut);
      const tail = takeTail(text, cut);
      assert.ok(isWellFormed(head) && isWellFormed(tail), `cut at ${cut}`);
      assert.ok(text.startsWith(head) && text.endsWith(tail));
      // A family is kept whole or not at all.
      for (const part of [head, tail]) {
        if (part.includes('👨')) assert.ok(part.includes(family), `partial family at cut ${cut}: ${JSON.stringify(part)}`);
      }
      if (head.endsWith('e')) assert.fail('combining accent separated from its letter');
    }
  });

  it('keeps head and tail with a marker saying how much was dropped', () => {
    const text = 'START ' + 'x'.repeat(10_000) + ' END';
    const cut = truncateMiddle(text, 100);
    assert.ok(cut.startsWith('START '));
    assert.ok(cut.endsWith(' END'));
    assert.match(cut, /\[… 9,910 characters omitted …\]/);
    assert.equal(truncateMiddle('short', 100), 'short');
  });

  it('previews a prompt on one line with an ellipsis, emoji intact', () => {
    assert.equal(previewLine('Fix\n\n  the   bug', 50), 'Fix the bug');
    const preview = previewLine('🎉'.repeat(30), 10);
    assert.ok(isWellFormed(preview));
    assert.ok(preview.endsWith('…'));
    assert.ok([...preview].length <= 10);
  });

  it('finds boundaries at the ends of the string', () => {
    assert.equal(graphemeBoundaryAtOrBefore('abc', -5), 0);
    assert.equal(graphemeBoundaryAtOrBefore('abc', 99), 3);
  });
});

describe('HeadTailBuffer', () => {
  it('returns short text unchanged', () => {
    const buffer = new HeadTailBuffer(10, 10);
    buffer.append('hello ');
    buffer.append('world');
    assert.equal(buffer.toString(), 'hello world');
  });

  it('keeps the first and last characters of a long stream and counts the rest', () => {
    const buffer = new HeadTailBuffer(1000, 1000);
    for (let i = 0; i < 10_000; i++) buffer.append(`line ${i} 🌊\n`);
    const text = buffer.toString();
    assert.ok(text.startsWith('line 0 🌊\nline 1 🌊\n'));
    assert.ok(text.endsWith('line 9999 🌊\n'));
    assert.match(text, /characters omitted/);
    assert.ok(text.length < 2200);
    assert.ok(isWellFormed(text));
    assert.equal(buffer.totalChars, Array.from({ length: 10_000 }, (_, i) => `line ${i} 🌊\n`).join('').length);
  });
});

describe('LineSplitter', () => {
  it('splits across chunk boundaries, strips CR, and flushes the last line', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line));
    splitter.push('one\r\ntw');
    splitter.push('o\nthree');
    splitter.flush();
    assert.deepEqual(lines, ['one', 'two', 'three']);
  });

  it('hands on an endless line in bounded pieces', () => {
    const pieces: Array<{ length: number; partial: boolean }> = [];
    const splitter = new LineSplitter((line, partial) => pieces.push({ length: line.length, partial }), 1000);
    for (let i = 0; i < 50; i++) splitter.push('y'.repeat(100));
    splitter.push('\n');
    assert.ok(pieces.every((piece) => piece.length <= 1000));
    assert.equal(
      pieces.reduce((sum, piece) => sum + piece.length, 0),
      5000,
    );
    assert.equal(pieces.at(-1)!.partial, false);
  });
});
