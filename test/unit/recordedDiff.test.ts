import assert from 'node:assert/strict';
import { recordedDiffParts } from '../../src/sessions/recordedDiff.js';
import type { SessionPart } from '../../src/sessions/sessionReading.js';
import { parseLine } from '../../src/sessions/sessionLineParsing.js';
import { iterationLine, startLine } from '../support/sessionFixtures.js';

/** A session's parts as a reading hands them on: its start, then an iteration per line given. */
async function* partsOf(...iterations: Record<string, unknown>[]): AsyncGenerator<SessionPart> {
  const start = parseLine(JSON.stringify(startLine()));
  if (!start.ok || start.line.type !== 'session_start') throw new Error('the fixture start line does not parse');
  yield { kind: 'start', line: start.line, filePath: '/sessions/s.jsonl' };
  for (const [index, fields] of iterations.entries()) {
    const parsed = parseLine(JSON.stringify(fields));
    if (!parsed.ok || parsed.line.type !== 'iteration') throw new Error('a fixture iteration line does not parse');
    yield { kind: 'warning', message: 'a warning between the parts is no diff' };
    yield { kind: 'iteration', line: parsed.line, range: { start: index * 100, end: index * 100 + 99 } };
  }
}

async function collect(pieces: AsyncIterable<string>): Promise<string[]> {
  const all: string[] = [];
  for await (const piece of pieces) all.push(piece);
  return all;
}

describe('recorded diff (a session’s diffs from its parts)', () => {
  it('heads each iteration’s diff with its number, ends each with a newline and leaves empty diffs out', async () => {
    const pieces = await collect(
      recordedDiffParts(
        's',
        partsOf(
          iterationLine(1, { git_diff: 'diff a\n', git_insertions: 1 }),
          iterationLine(2, { git_diff: '', git_insertions: 0 }),
          iterationLine(3, { git_diff: 'diff c', git_insertions: 1 }),
        ),
      ),
    );
    assert.equal(pieces.join(''), '# iteration 1\ndiff a\n# iteration 3\ndiff c\n');
  });

  it('says when a diff is the whole change since HEAD, as the original codeloops recorded it', async () => {
    const pieces = await collect(recordedDiffParts('s', partsOf(iterationLine(0, { git_diff: 'diff all\n' }))));
    assert.equal(pieces.join(''), '# iteration 0 (the whole change since HEAD, as the original codeloops recorded it; not the iteration’s own)\ndiff all\n');
  });

  it('gives one iteration’s diff as it is, and reads no further', async () => {
    let partsRead = 0;
    async function* counted(): AsyncGenerator<SessionPart> {
      for await (const part of partsOf(iterationLine(1), iterationLine(2, { git_diff: 'diff b' }), iterationLine(3))) {
        partsRead++;
        yield part;
      }
    }
    assert.deepEqual(await collect(recordedDiffParts('s', counted(), 2)), ['diff b']);
    assert.equal(partsRead, 5, 'the start, then a warning and an iteration for each of the first two');
  });

  it('names the iterations there are when the one asked for is not there', async () => {
    await assert.rejects(collect(recordedDiffParts('s-1', partsOf(iterationLine(1), iterationLine(2)), 7)), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'iteration_not_found');
      assert.equal(error.message, 'Session s-1 has no iteration 7 (iterations: 1, 2).');
      return true;
    });
    await assert.rejects(collect(recordedDiffParts('s-2', partsOf(), 1)), /has no iteration 1 \(iterations: none\)/);
  });
});
