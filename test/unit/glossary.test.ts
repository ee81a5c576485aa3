import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/testEnvironment.js';

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces made dashes. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');

describe("CONTRIBUTING's words and docs/glossary.md", () => {
  const contributing = fs.readFileSync(path.join(repoRoot(), 'CONTRIBUTING.md'), 'utf8');
  const glossary = fs.readFileSync(path.join(repoRoot(), 'docs', 'glossary.md'), 'utf8');
  const anchors = new Set([...glossary.matchAll(/^#{2,3} (.+)$/gm)].map((heading) => anchorOf(heading[1]!)));
  const rows = [...contributing.matchAll(/^\| \[([^\]]+)\]\(docs\/glossary\.md#([^)]+)\) \| (.+) \|$/gm)];

  it('a row a word, short enough to scan, each linked to its own section of the glossary, and a section for each', () => {
    assert.ok(rows.length >= 40, `${rows.length} rows`);
    for (const [, word, anchor, rest] of rows) {
      assert.ok(anchors.has(anchor!), `${word}: no section #${anchor} in docs/glossary.md`);
      const text = rest!.split(' | ').join(' ');
      assert.ok(text.length <= 150, `${word}: ${text.length} characters; the detail belongs in docs/glossary.md`);
    }
    assert.equal(new Set(rows.map((row) => row[2])).size, rows.length, 'no two rows link the same section');
    assert.equal(rows.length, anchors.size - 2, 'a section of the glossary for each row (beside its two parts)');
  });
});
