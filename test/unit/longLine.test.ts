import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { LONG_STRING_BYTES, longStringLiteral, longStringText, scanLongLine } from '../../src/sessions/longLine.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { SessionLibrary, MAX_CACHED_VIEW_BYTES } from '../../src/sessionView/sessionLibrary.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

/** A file holding one line, open for the scanner. */
async function openLine(line: string): Promise<{ handle: fs.promises.FileHandle; end: number }> {
  const file = path.join(tempDir(), 'line.jsonl');
  fs.writeFileSync(file, line + '\n');
  return { handle: await fs.promises.open(file), end: Buffer.byteLength(line) };
}

async function collect<T extends string | Buffer>(pieces: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const piece of pieces) all.push(piece);
  return all;
}

/** Text that puts an escape, a surrogate pair as escapes and a 4-byte character on every boundary a 1 MB slice could fall on. */
function awkwardText(chars: number): string {
  const unit = 'ab\n"\\é\u{1F600}\u2028\t\u0001xyz';
  return unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
}

describe('long session lines, left in the file', () => {
  after(removeTempDirs);

  it('parses everything but the long string values, and measures those as string.length would', async () => {
    const output = awkwardText(1_500_000);
    const line = JSON.stringify(iterationLine(3, { actor_output: output, git_diff: 'd'.repeat(LONG_STRING_BYTES + 1), feedback: 'short' }));
    const { handle, end } = await openLine(line);
    try {
      const scanned = await scanLongLine(handle, 0, end);
      assert.ok(scanned.ok, scanned.ok ? '' : scanned.reason);
      const value = scanned.value as Record<string, unknown>;
      assert.equal(value.actor_output, '', 'left in the file');
      assert.equal(value.git_diff, '');
      assert.equal(value.feedback, 'short', 'short values parsed as usual');
      assert.equal(value.iteration_number, 3);
      assert.deepEqual([...scanned.long.keys()].sort(), ['actor_output', 'git_diff']);
      assert.equal(scanned.long.get('actor_output')!.chars, output.length);
      assert.equal(scanned.long.get('git_diff')!.chars, LONG_STRING_BYTES + 1);

      // Decoded a slice at a time, escapes cut by slices and all, it is the value; as a literal, its JSON.
      const pieces = await collect(longStringText(handle, scanned.long.get('actor_output')!));
      assert.ok(pieces.length > 1, 'in several pieces');
      assert.ok(pieces.join('') === output, 'the value, whole');
      for (const piece of pieces) assert.ok(!/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(piece), 'no piece splits a surrogate pair');
      const literal = Buffer.concat(await collect(longStringLiteral(handle, scanned.long.get('actor_output')!))).toString('utf8');
      assert.ok(literal === JSON.stringify(output), 'its JSON');
    } finally {
      await handle.close();
    }
  });

  it('keeps a surrogate pair written as two escapes together when it decodes a slice at a time', async () => {
    // JSON.stringify writes 😀 as UTF-8; other writers may write "\ud83d\ude00".
    const body = 'x\\ud83d\\ude00'.repeat(200_000);
    const { handle, end } = await openLine(`{"type":"iteration","actor_output":"${body}"}`);
    try {
      const scanned = await scanLongLine(handle, 0, end);
      assert.ok(scanned.ok);
      assert.equal(scanned.long.get('actor_output')!.chars, 3 * 200_000);
      const pieces = await collect(longStringText(handle, scanned.long.get('actor_output')!));
      assert.ok(pieces.length > 1);
      for (const piece of pieces) assert.ok(!/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(piece), 'no piece splits a surrogate pair');
      assert.ok(pieces.join('') === 'x\u{1F600}'.repeat(200_000), 'the value, whole');
    } finally {
      await handle.close();
    }
  });

  it('refuses a long value that is not valid JSON, as JSON.parse would', async () => {
    const long = 'x'.repeat(LONG_STRING_BYTES + 10);
    const cases = [
      `{"type":"iteration","actor_output":"${long}\\q"}`,
      `{"type":"iteration","actor_output":"${long}\\u12G4"}`,
      `{"type":"iteration","actor_output":"${long}\u0001"}`,
      `{"type":"iteration","actor_output":"${long}`,
      `{"type":"iteration","actor_output":"${long}",}`,
    ];
    for (const line of cases) {
      const { handle, end } = await openLine(line);
      try {
        const scanned = await scanLongLine(handle, 0, end);
        assert.equal(scanned.ok, false, line.slice(-12));
        assert.throws(() => JSON.parse(line));
      } finally {
        await handle.close();
      }
    }
  });

  it('reads a session alike whether its long lines are parsed whole or left in the file', async () => {
    const dir = tempDir();
    const output = awkwardText(2_000_000);
    const diff = `diff --git a/big b/big\n--- a/big\n+++ b/big\n@@ -0,0 +1 @@\n${'+big line é\n'.repeat(100_000)}`;
    const id = writeSession(dir, [startLine(), iterationLine(1, { actor_output: output, git_diff: diff }), iterationLine(2), endLine({ iterations: 2 })]);
    const store = new SessionStore(dir);
    const whole = await store.load(id);
    const light: unknown[] = [];
    for await (const part of store.read(id, { leaveLongStrings: true })) {
      if (part.kind !== 'iteration') continue;
      const line = { ...part.line } as Record<string, unknown>;
      for (const key of part.long?.chars.keys() ?? []) line[key] = (await collect(part.long!.text(key))).join('');
      light.push(line);
    }
    assert.ok(JSON.stringify(light) === JSON.stringify(whole.iterations), 'the same lines');
    const pieces: Buffer[] = [];
    for await (const part of store.readAsJson(id)) {
      if (part.kind === 'iteration') for await (const piece of part.json) pieces.push(Buffer.from(piece));
    }
    // Not assert.equal: a failure would print megabytes.
    assert.ok(Buffer.concat(pieces).equals(Buffer.from(whole.iterations.map((line) => JSON.stringify(line)).join(''))), 'the JSON as it is in the file');
    assert.ok((await store.recordedDiff(id, 1)) === diff, 'the diff, decoded a slice at a time');
  });
});

describe('the viewer’s cache of sessions, bounded by bytes', () => {
  after(removeTempDirs);

  function countingStore(dir: string) {
    const store = new SessionStore(dir);
    const reads: string[] = [];
    const read = store.read.bind(store);
    store.read = (id, options) => {
      reads.push(id);
      return read(id, options);
    };
    return { store, reads };
  }

  it('keeps a view while its file is unchanged, and a session of hundreds of megabytes costs its view, not its outputs', async () => {
    const dir = tempDir();
    const feedback = 'A long review. '.repeat(150_000);
    const big = writeSession(dir, [startLine({ prompt: 'big' }), iterationLine(1, { actor_output: 'x'.repeat(20_000_000), feedback }), endLine()]);
    const { store, reads } = countingStore(dir);
    const library = new SessionLibrary(store, () => path.join(dir, 'no-sidecar'));
    const view = await library.view(big);
    assert.equal(view.iterations[0]!.actor_output_chars, 20_000_000);
    assert.ok(view.iterations[0]!.feedback === feedback, 'what the view shows is read, long as it is');
    assert.ok(JSON.stringify(view).length < feedback.length + 10_000, 'the view holds no output');
    await library.view(big);
    assert.deepEqual(reads, [big], 'read once');
    assert.equal((await library.detail(big, 1))!.actor_output.length, 20_000_000, 'the output, read on demand');
  });

  it('drops the least recently used views once their bytes pass the bound, and never keeps one bigger than the bound', async () => {
    const dir = tempDir();
    // Views of a little more than a quarter of the bound each (feedback is part of the view, about 4 bytes a character).
    const feedback = 'f'.repeat(Math.ceil(MAX_CACHED_VIEW_BYTES / 4 / 4));
    const ids = [1, 2, 3, 4].map((n) => writeSession(dir, [startLine({ prompt: `session ${n}` }), iterationLine(1, { feedback }), endLine()]));
    const huge = writeSession(dir, [startLine({ prompt: 'huge view' }), iterationLine(1, { feedback: feedback.repeat(4) }), endLine()]);
    const { store, reads } = countingStore(dir);
    const library = new SessionLibrary(store, () => path.join(dir, 'no-sidecar'));
    for (const id of ids) await library.view(id);
    reads.length = 0;
    await library.view(ids[3]!);
    await library.view(ids[1]!);
    assert.deepEqual(reads, [], 'the latest ones are kept');
    await library.view(ids[0]!);
    assert.deepEqual(reads, [ids[0]], 'the oldest was dropped to stay within the bound');
    reads.length = 0;
    await library.view(huge);
    await library.view(huge);
    assert.deepEqual(reads, [huge, huge], 'a view bigger than the bound is built each time, never kept');
  });
});
