import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { COMPACT, jsonArrayBytes, jsonArrayPieces, ONE_ITEM_A_LINE } from '../../src/text/jsonBytes.js';

describe('JSON arrays from items already JSON (listings print summaries as the index keeps them)', () => {
  const items = [{ id: 'a', prompt: 'faster 🚀' }, { id: 'b', note: '“quoted”\n' }, [1, 2], 'text', null].map((item) => ({
    item,
    bytes: Buffer.from(JSON.stringify(item)),
  }));

  it('writes one item a line, or compact, and each parses back to its items', () => {
    for (const count of [0, 1, items.length]) {
      const chosen = items.slice(0, count);
      const lines = jsonArrayBytes(chosen.map(({ bytes }) => bytes)).toString('utf8');
      assert.deepEqual(
        JSON.parse(lines),
        chosen.map(({ item }) => item),
      );
      assert.ok(lines.endsWith('\n'), 'ends with a newline, as a command’s output does');
      if (count > 1) assert.equal(lines.split('\n').length, count + 3, 'one item a line');
      const compact = jsonArrayBytes(
        chosen.map(({ bytes }) => bytes),
        COMPACT,
      ).toString('utf8');
      assert.equal(compact, JSON.stringify(chosen.map(({ item }) => item)));
    }
  });

  it('in pieces of a few items, which together are the whole array', () => {
    for (const perPiece of [1, 2, items.length, 100]) {
      for (const layout of [COMPACT, ONE_ITEM_A_LINE]) {
        const pieces = [
          ...jsonArrayPieces(
            items.map(({ bytes }) => bytes),
            perPiece,
            layout,
          ),
        ];
        assert.equal(pieces.length, Math.ceil(items.length / perPiece));
        assert.deepEqual(
          Buffer.concat(pieces),
          jsonArrayBytes(
            items.map(({ bytes }) => bytes),
            layout,
          ),
          `${perPiece} a piece`,
        );
      }
    }
    assert.equal(Buffer.concat([...jsonArrayPieces([], 10)]).toString('utf8'), '[]');
  });
});
