import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { figuresText, IndexLines, SessionIndexLine } from '../../src/sessionFormat/sessionIndex.js';
import { AGENT_DISPLAY_NAMES, AGENT_KINDS } from '../../src/agents/agentKinds.js';
import type { SessionSummary } from '../../src/sessionFormat/sessionSummaries.js';
import { noFigures } from '../../src/sessions/sessionFigures.js';

const NO_FIGURES = noFigures(null);
import { matchesFilter, parseFilterDate } from '../../src/sessions/sessionFilter.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

/** What `work` read: bytes in all, and the session files (`*.jsonl`) it opened. */
async function bytesReadDuring<T>(work: () => Promise<T>): Promise<{ result: T; bytes: number; sessionFilesOpened: string[] }> {
  const { readSync, openSync } = fs;
  let bytes = 0;
  const sessionFilesOpened: string[] = [];
  (fs as { readSync: typeof fs.readSync }).readSync = ((...args: Parameters<typeof fs.readSync>) => {
    const count = readSync(...args);
    bytes += count;
    return count;
  }) as typeof fs.readSync;
  (fs as { openSync: typeof fs.openSync }).openSync = ((...args: Parameters<typeof fs.openSync>) => {
    if (String(args[0]).endsWith('.jsonl')) sessionFilesOpened.push(String(args[0]));
    return openSync(...args);
  }) as typeof fs.openSync;
  try {
    return { result: await work(), bytes, sessionFilesOpened };
  } finally {
    Object.assign(fs, { readSync, openSync });
  }
}

describe('session store', () => {
  after(removeTempDirs);

  it('reads a changed file once, a multi-megabyte middle line skimmed, and then lists it from the index without reading it', async () => {
    const dir = tempDir();
    const huge = 'x'.repeat(8 * 1024 * 1024);
    const id = writeSession(dir, [
      startLine(),
      iterationLine(1, { actor_output: huge, git_diff: huge }),
      iterationLine(2, { critic_decision: 'DONE', feedback: null }),
      endLine({ iterations: 2 }),
    ]);
    const warnings: string[] = [];
    const store = new SessionStore(dir, (message) => warnings.push(message));
    const { result, bytes } = await bytesReadDuring(() => store.list());
    assert.equal(result.length, 1);
    assert.equal(result[0]!.outcome, 'success');
    assert.equal(result[0]!.iterations, 2);
    // Its first and last lines for the summary, then the whole once for its figures (stats'): never twice.
    const size = fs.statSync(path.join(dir, `${id}.jsonl`)).size;
    assert.ok(bytes > size && bytes < size + 300 * 1024, `read ${bytes} bytes of a ${size}-byte file`);
    assert.equal(result[0]!.id, id);
    assert.deepEqual(warnings, []);
    const aMinuteAgo = new Date(Date.now() - 60_000);
    fs.utimesSync(path.join(dir, `${id}.jsonl`), aMinuteAgo, aMinuteAgo);
    await new SessionStore(dir).list();
    const again = await bytesReadDuring(() => new SessionStore(dir).list());
    assert.deepEqual(again.sessionFilesOpened, [], 'another process lists it from the index');
  });

  it('sees session_end after a huge final iteration (the original read only 64 KB and called it running)', async () => {
    const dir = tempDir();
    writeSession(dir, [startLine(), iterationLine(1, { actor_output: 'y'.repeat(200_000), critic_decision: 'DONE', feedback: null }), endLine()]);
    const [summary] = await new SessionStore(dir).list();
    assert.equal(summary!.outcome, 'success');
    assert.equal(summary!.confidence, 0.9);
  });

  it('reports a running session from its last iteration, even a huge one', async () => {
    const dir = tempDir();
    writeSession(dir, [startLine(), iterationLine(1), iterationLine(2, { actor_output: 'z'.repeat(3_000_000) })]);
    const [summary] = await new SessionStore(dir).list();
    assert.equal(summary!.outcome, null);
    assert.equal(summary!.iterations, 2);
    assert.equal(summary!.duration_secs, null);
  });

  it('reads a huge last line written with its fields in another order', async () => {
    const dir = tempDir();
    const reordered = { iteration_number: 7, ...iterationLine(7, { actor_output: 'q'.repeat(2_000_000) }) };
    writeSession(dir, [startLine(), { raw: JSON.stringify(reordered) + '\n' }]);
    const [summary] = await new SessionStore(dir).list();
    assert.equal(summary!.iterations, 7);
  });

  it('skips a torn last line with a warning and keeps going, in listing and loading', async () => {
    const dir = tempDir();
    const torn = JSON.stringify(iterationLine(2)).slice(0, 40);
    const id = writeSession(dir, [startLine(), iterationLine(1), { raw: torn }]);
    const warnings: string[] = [];
    const store = new SessionStore(dir, (message) => warnings.push(message));
    const [summary] = await store.list();
    assert.equal(summary!.iterations, 1);
    assert.ok(
      warnings.some((warning) => /torn/.test(warning)),
      warnings.join('\n'),
    );
    const session = await store.load(id);
    assert.equal(session.iterations.length, 1);
    assert.equal(session.end, null);
    assert.match(session.warnings.join('\n'), /torn last line 3/);
  });

  it('skips bad lines in the middle with a warning and reads the rest', async () => {
    const dir = tempDir();
    const id = writeSession(dir, [
      startLine(),
      { raw: 'not json\n' },
      iterationLine(1),
      { raw: '{"type":"iteration","iteration_number":"two"}\n' },
      { raw: '\n' },
      iterationLine(2, { critic_decision: 'DONE', feedback: null }),
      endLine({ iterations: 2 }),
    ]);
    const session = await new SessionStore(dir).load(id);
    assert.deepEqual(
      session.iterations.map((it) => it.iteration_number),
      [1, 2],
    );
    assert.equal(session.end?.outcome, 'success');
    assert.equal(session.warnings.length, 2);
    assert.match(session.warnings[0]!, /line 2: not valid JSON/);
    assert.match(session.warnings[1]!, /line 4: iteration_number/);
  });

  it('skips empty files and files that do not start with session_start, and ignores other files', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'empty.jsonl'), '');
    fs.writeFileSync(path.join(dir, 'wrong.jsonl'), JSON.stringify(iterationLine(1)) + '\n');
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'hello');
    fs.writeFileSync(path.join(dir, 'bad name.jsonl'), JSON.stringify(startLine()) + '\n');
    writeSession(dir, [startLine()]);
    const warnings: string[] = [];
    const summaries = await new SessionStore(dir, (message) => warnings.push(message)).list();
    assert.equal(summaries.length, 1);
    assert.equal(warnings.length, 2);
    await assert.rejects(new SessionStore(dir).load('wrong'), /does not start with a session_start/);
  });

  it('lists past a folder named like a session, and reads a file that starts with a byte-order mark', async () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'folder.jsonl'));
    const id = writeSession(dir, [startLine(), endLine({ iterations: 0 })]);
    fs.writeFileSync(path.join(dir, `${id}.jsonl`), '\uFEFF' + fs.readFileSync(path.join(dir, `${id}.jsonl`), 'utf8'));
    const warnings: string[] = [];
    const summaries = await new SessionStore(dir, (message) => warnings.push(message)).list();
    assert.deepEqual(
      summaries.map((summary) => summary.id),
      [id],
    );
    assert.match(warnings.join('\n'), /folder: skipped, .*folder\.jsonl is a folder, not a file/);
  });

  it('reads a session whose only line has no newline yet', async () => {
    const dir = tempDir();
    writeSession(dir, [{ raw: JSON.stringify(startLine()) }], 'only-start');
    const [summary] = await new SessionStore(dir).list();
    assert.equal(summary!.iterations, 0);
  });

  it('reads sessions written by the original codeloops, display strings and all', async () => {
    const dir = tempDir();
    const id = writeSession(dir, [
      startLine(),
      iterationLine(1, { critic_decision: 'DONE (confidence: 95%)', feedback: null }),
      endLine({ outcome: 'user_interrupted' }),
    ]);
    const session = await new SessionStore(dir).load(id);
    assert.equal(session.iterations[0]!.critic_decision, 'DONE');
    assert.equal(session.end!.outcome, 'interrupted');
  });

  it('previews non-ASCII prompts without cutting a character', async () => {
    const dir = tempDir();
    writeSession(dir, [startLine({ prompt: '🎉'.repeat(200) + ' Ünïcode' })]);
    const [summary] = await new SessionStore(dir).list();
    assert.ok(summary!.prompt_preview.endsWith('…'));
    assert.ok(!/[\ud800-\udbff]…$/.test(summary!.prompt_preview));
    assert.ok([...summary!.prompt_preview].length <= 100);
  });

  describe('filters and stats', () => {
    let store: SessionStore;
    before(() => {
      const dir = tempDir();
      const session = (day: string, project: string, prompt: string, end: Record<string, unknown> | null) =>
        writeSession(dir, [startLine({ timestamp: `${day}T10:00:00Z`, working_dir: `/work/${project}`, prompt }), ...(end ? [endLine(end)] : [])]);
      session('2025-01-01', 'alpha', 'Add LOGIN page', { outcome: 'success', iterations: 1, duration_secs: 10 });
      session('2025-01-02', 'alpha', 'Fix logout', { outcome: 'failed', iterations: 3, duration_secs: 30, summary: null, confidence: null });
      session('2025-01-02', 'beta', 'Write docs', { outcome: 'success', iterations: 2, duration_secs: 20 });
      session('2025-01-05', 'beta', 'Refactor', null);
      store = new SessionStore(dir);
    });

    it('sorts newest first', async () => {
      assert.deepEqual(
        (await store.list()).map((s) => s.prompt_preview),
        ['Refactor', 'Write docs', 'Fix logout', 'Add LOGIN page'],
      );
    });

    it('filters by several outcomes, dates, search and project', async () => {
      assert.equal((await store.list({ outcomes: ['success', 'failed'] })).length, 3);
      assert.deepEqual(
        (await store.list({ after: parseFilterDate('2025-01-02', 'after'), before: parseFilterDate('2025-01-02', 'before') })).map((s) => s.prompt_preview),
        ['Write docs', 'Fix logout'],
      );
      assert.deepEqual(
        (await store.list({ search: 'login' })).map((s) => s.prompt_preview),
        ['Add LOGIN page'],
      );
      assert.deepEqual(
        (await store.list({ project: 'beta' })).map((s) => s.project),
        ['beta', 'beta'],
      );
      assert.throws(() => parseFilterDate('yesterday', 'after'), /not a date/);
    });

    it('computes stats as the original defined them', async () => {
      const stats = await store.stats();
      assert.equal(stats.total_sessions, 4);
      assert.equal(stats.success_rate, 0.5);
      assert.equal(stats.avg_iterations, 1.5);
      assert.equal(stats.avg_duration_secs, 20);
      assert.deepEqual(stats.sessions_over_time, [
        { date: '2025-01-01', count: 1 },
        { date: '2025-01-02', count: 2 },
        { date: '2025-01-05', count: 1 },
      ]);
      assert.deepEqual(stats.by_project, [
        { project: 'alpha', total: 2, success_rate: 0.5 },
        { project: 'beta', total: 2, success_rate: 0.5 },
      ]);
    });

    it('resolves ids, prefixes and "latest", and says what is wrong otherwise', async () => {
      const [newest] = await store.list();
      assert.equal(await store.resolveId('latest'), newest!.id);
      assert.equal(await store.resolveId('2025-01-05'), newest!.id);
      await assert.rejects(store.resolveId('2025-01-0'), /matches 4 sessions/);
      await assert.rejects(store.resolveId('nope'), /No session "nope"/);
      await assert.rejects(store.load('../etc/passwd'), /No session/);
    });
  });

  it('reads a session out of order alike in every mode: each line out of place said, an iteration after the end kept, the last end winning', async () => {
    const dir = tempDir();
    const iterationTwo = iterationLine(2);
    const id = writeSession(dir, [
      startLine(),
      iterationLine(1),
      endLine({ iterations: 1, outcome: 'failed' }),
      iterationTwo,
      endLine({ iterations: 2 }),
      startLine({ prompt: 'a second start' }),
    ]);
    const warned: string[] = [];
    const store = new SessionStore(dir, (message) => warned.push(message));
    const expected = [
      'start',
      'iteration',
      'end',
      'warning: line 4: iteration after session_end',
      'iteration',
      'warning: line 5: a second session_end; the last one wins',
      'end',
      'warning: skipped line 6: a second session_start',
    ];
    const describe = (part: { kind: string; message?: string }) => (part.kind === 'warning' ? `warning: ${part.message}` : part.kind);
    for (const leaveLongStrings of [false, true]) {
      const parts = [];
      for await (const part of store.read(id, { leaveLongStrings })) parts.push(part);
      assert.deepEqual(parts.map(describe), expected, `read, leaveLongStrings ${leaveLongStrings}`);
    }
    const jsonParts = [];
    for await (const part of store.readAsJson(id)) jsonParts.push(part);
    assert.deepEqual(jsonParts.map(describe), expected, 'readAsJson');
    const secondIteration = jsonParts.filter((part) => part.kind === 'iteration')[1]!;
    assert.deepEqual(JSON.parse([...(secondIteration.json as Iterable<string>)].join('')), iterationTwo, 'each iteration as its text');

    const session = await store.load(id);
    assert.deepEqual(
      session.iterations.map((line) => line.iteration_number),
      [1, 2],
    );
    assert.equal(session.end?.outcome, 'success', 'the last end wins');
    assert.equal(session.warnings.length, 3);
    assert.ok(warned.length > 0 && warned.every((message) => message.startsWith(`${id}: `)), 'said to the sink, named by the session');
    assert.equal((await store.startLine(id)).prompt, 'Fix the typo', 'the first start is the start');
  });

  it('refuses a file whose first readable line is no start, saying why its first line could not be read', async () => {
    const dir = tempDir();
    writeSession(dir, [{ raw: 'not json\n' }, { raw: '{"type":"session_start"}\n' }], 'unreadable-start');
    const store = new SessionStore(dir);
    await assert.rejects(store.load('unreadable-start'), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'not_a_session');
      assert.match(error.message, /has no readable session_start line: line 1 is not valid JSON\.$/);
      return true;
    });
    await assert.rejects(store.startLine('unreadable-start'), /no readable session_start line: line 1 is not valid JSON/);
  });

  it('lists nothing, without error, when the folder does not exist', async () => {
    assert.deepEqual(await new SessionStore(path.join(tempDir(), 'missing')).list(), []);
  });
});

/** The index file: a header line, then a line per session (sessionFormat/sessionIndex.ts). */
function readIndex(file: string): { header: { sessions_dir: string; entries_crc32: number }; ids: string[] } {
  const [header, ...lines] = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
  return { header: JSON.parse(header!), ids: lines.map((line) => line.split('\t')[0]!) };
}

describe('session summary index (listing reads only what changed)', () => {
  after(removeTempDirs);

  /** Makes a file look old enough to be cached (changed more than the racy window ago). */
  const age = (file: string, secondsAgo = 60) => {
    const when = new Date(Date.now() - secondsAgo * 1000);
    fs.utimesSync(file, when, when);
  };

  function twoSessions() {
    const dir = tempDir();
    const a = writeSession(dir, [startLine({ prompt: 'alpha' }), iterationLine(1, { critic_decision: 'DONE', feedback: null }), endLine()]);
    const b = writeSession(dir, [startLine({ prompt: 'beta', timestamp: '2025-01-28T10:00:00Z' }), iterationLine(1)]);
    for (const id of [a, b]) age(path.join(dir, `${id}.jsonl`));
    return { dir, a, b };
  }

  it('keeps summaries beside the folder and reads no unchanged file on the next listing, even in another process', async () => {
    const { dir } = twoSessions();
    const first = await new SessionStore(dir).list();
    assert.ok(fs.existsSync(path.join(path.dirname(dir), `${path.basename(dir)}-index.json`)), 'the index is written beside the folder');
    const again = await bytesReadDuring(() => new SessionStore(dir).list());
    assert.deepEqual(again.result, first);
    assert.deepEqual(again.sessionFilesOpened, [], 'a fresh store (another process) reads the index, not the sessions');
  });

  it('keeps the index in the folder’s order, rewrites it only when a session comes or goes, and lists the same either way', async () => {
    const { dir, a } = twoSessions();
    const indexFile = path.join(path.dirname(dir), `${path.basename(dir)}-index.json`);
    const inFolderOrder = async () => {
      const indexed = new Set(readIndex(indexFile).ids);
      return (await new SessionStore(dir).listIds()).filter((id) => indexed.has(id));
    };
    const expected = await new SessionStore(dir).list();
    assert.deepEqual(readIndex(indexFile).ids, await inFolderOrder());

    // Nothing changed: listed again (also filtered, which asks out of order), the index is left as it is.
    const aMinuteAgo = new Date(Date.now() - 60_000);
    fs.utimesSync(indexFile, aMinuteAgo, aMinuteAgo);
    const untouched = fs.statSync(indexFile).mtimeMs;
    assert.deepEqual(await new SessionStore(dir).list(), expected);
    assert.equal((await new SessionStore(dir).list({ search: 'beta' })).length, 1);
    assert.equal(fs.statSync(indexFile).mtimeMs, untouched, 'not rewritten');

    // A session added and one removed: both seen, and the index follows the folder again.
    const c = writeSession(dir, [startLine({ prompt: 'gamma', timestamp: '2025-01-29T10:00:00Z' }), iterationLine(1)]);
    age(path.join(dir, `${c}.jsonl`));
    fs.rmSync(path.join(dir, `${a}.jsonl`));
    const listed = await new SessionStore(dir).list();
    assert.deepEqual(
      listed.map((summary) => summary.prompt_preview),
      ['gamma', 'beta'],
    );
    assert.deepEqual(readIndex(indexFile).ids, await inFolderOrder());
    assert.equal(readIndex(indexFile).ids.length, 2);
    // One store listing twice (the editor's tree) reads nothing the second time.
    const store = new SessionStore(dir);
    await store.list();
    assert.deepEqual((await bytesReadDuring(() => store.list())).sessionFilesOpened, []);
  });

  it('lists a file dated before 1970 and a session started before it, every time, without keeping them in the index', async () => {
    const dir = tempDir();
    const old = writeSession(dir, [startLine({ prompt: 'touched back', timestamp: '2025-01-02T10:00:00Z' }), iterationLine(1)]);
    const early = writeSession(dir, [startLine({ prompt: 'from the sixties', timestamp: '1969-07-20T20:17:00Z' }), iterationLine(1)]);
    fs.utimesSync(path.join(dir, `${old}.jsonl`), new Date('1960-01-01T00:00:00Z'), new Date('1960-01-01T00:00:00Z'));
    age(path.join(dir, `${early}.jsonl`));
    for (let round = 0; round < 2; round++) {
      assert.deepEqual(
        (await new SessionStore(dir).list()).map((summary) => summary.prompt_preview),
        ['touched back', 'from the sixties'],
        `listing ${round + 1}`,
      );
    }
    const indexFile = path.join(path.dirname(dir), `${path.basename(dir)}-index.json`);
    assert.deepEqual(fs.existsSync(indexFile) ? readIndex(indexFile).ids : [], []);
  });

  it('never trusts the index over a file that changed: a session that grew is read again', async () => {
    const { dir, b } = twoSessions();
    await new SessionStore(dir).list();
    const file = path.join(dir, `${b}.jsonl`);
    fs.appendFileSync(file, JSON.stringify(endLine({ outcome: 'failed', timestamp: '2025-01-28T10:05:00Z' })) + '\n');
    const listed = await new SessionStore(dir).list();
    assert.equal(listed.find((summary) => summary.id === b)?.outcome, 'failed');
  });

  it('reads a file changed in the last moments every time: a same-size rewrite within the timestamp’s resolution is never missed', async () => {
    const dir = tempDir();
    const id = writeSession(dir, [startLine({ prompt: 'gamma' }), iterationLine(1)]);
    const file = path.join(dir, `${id}.jsonl`);
    const stamp = fs.statSync(file);
    await new SessionStore(dir).list();
    // Same size, same modification time, different content: only reading the file can tell.
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"iteration_number":1', '"iteration_number":7'));
    fs.utimesSync(file, stamp.atime, stamp.mtime);
    const [summary] = await new SessionStore(dir).list();
    assert.equal(summary!.iterations, 7);
  });

  it('rebuilds a damaged or edited index and ignores one that belongs to another folder', async () => {
    const { dir } = twoSessions();
    const expected = await new SessionStore(dir).list();
    const indexFile = path.join(path.dirname(dir), `${path.basename(dir)}-index.json`);
    fs.writeFileSync(indexFile, '{"version":3,"sessions_dir":');
    assert.deepEqual(await new SessionStore(dir).list(), expected);
    assert.equal(readIndex(indexFile).header.sessions_dir, dir, 'rewritten whole');

    // An entry changed by hand no longer matches the header's checksum: not believed.
    const edited = fs.readFileSync(indexFile, 'utf8').replace(/"prompt_preview":"[^"]*"/g, '"prompt_preview":"edited"');
    fs.writeFileSync(indexFile, edited);
    assert.deepEqual(await new SessionStore(dir).list(), expected);

    // An index copied from another folder, however intact, is not used.
    const [header, ...lines] = fs.readFileSync(indexFile, 'utf8').split('\n');
    fs.writeFileSync(indexFile, [JSON.stringify({ ...JSON.parse(header!), sessions_dir: '/elsewhere' }), ...lines].join('\n'));
    assert.deepEqual(await new SessionStore(dir).list(), expected);
    assert.equal(readIndex(indexFile).header.sessions_dir, dir);
  });

  it('says again what a file warned about while the index serves it, and drops sessions that are gone', async () => {
    const dir = tempDir();
    const id = writeSession(dir, [startLine({ prompt: 'torn' }), iterationLine(1), { raw: '{"type":"iteration","iter' }]);
    age(path.join(dir, `${id}.jsonl`));
    for (let round = 0; round < 2; round++) {
      const warnings: string[] = [];
      await new SessionStore(dir, (message) => warnings.push(message)).list();
      assert.match(warnings.join('\n'), /torn/, `listing ${round + 1}`);
    }
    fs.rmSync(path.join(dir, `${id}.jsonl`));
    assert.deepEqual(await new SessionStore(dir).list(), []);
    const indexFile = path.join(path.dirname(dir), `${path.basename(dir)}-index.json`);
    assert.deepEqual(readIndex(indexFile).ids, []);
  });

  it('searches a prompt too long for the index by reading it from its file', async () => {
    const dir = tempDir();
    const long = `${'context '.repeat(1000)}needle at the end`;
    const id = writeSession(dir, [startLine({ prompt: long }), iterationLine(1)]);
    const aMinuteAgo = new Date(Date.now() - 60_000);
    fs.utimesSync(path.join(dir, `${id}.jsonl`), aMinuteAgo, aMinuteAgo);
    await new SessionStore(dir).list();
    assert.deepEqual(
      (await new SessionStore(dir).list({ search: 'needle at the end' })).map((summary) => summary.id),
      [id],
    );
  });

  it('keeps each line as bytes: the summary printed as written, emoji and warnings intact, and a line not as a runner writes it refused', () => {
    const summaryJson = JSON.stringify({ id: 'x1', prompt_preview: 'faster 🚀, “quoted”\ttab' });
    const fields = {
      id: 'x1',
      size: 1234,
      mtimeUs: 1795479821276999,
      startedMs: 1735689600000,
      summaryJson,
      warningsJson: '["torn ⚠"]',
      promptJson: '"make it 🚀"',
      figuresJson: figuresText({ ...NO_FIGURES, resumed_from: 'r\tab 🚀', done: 1 }),
    };
    const line = SessionIndexLine.format(fields);
    assert.deepEqual([line.id, line.size, line.mtimeUs, line.startedMs], ['x1', 1234, 1795479821276999, 1735689600000]);
    assert.equal(Buffer.from(line.summaryBytes).toString('utf8'), summaryJson, 'the summary’s bytes, as they were');
    assert.equal(line.summaryJson, summaryJson);
    assert.equal(line.warningsJson, '["torn ⚠"]');
    assert.equal(line.promptJson, '"make it 🚀"');
    assert.deepEqual(line.figures, { ...NO_FIGURES, resumed_from: 'r\tab 🚀', done: 1 }, 'the figures, after the prompt');
    assert.equal(SessionIndexLine.format({ ...fields, warningsJson: '' }).warningsJson, '');

    // Read again from a file of several lines, each from where it starts.
    const file = Buffer.from(
      `${Buffer.from(line.text).toString('utf8')}\n${Buffer.from(SessionIndexLine.format({ ...fields, id: 'x2', size: 7 }).text).toString('utf8')}\n`,
    );
    const second = file.indexOf('\n') + 1;
    const lines = new IndexLines(file);
    assert.deepEqual([lines.find('x1'), lines.find('x2')], [0, second], 'each the line after the last one found');
    assert.ok(lines.foundAllInOrder);
    lines.rewind();
    assert.deepEqual([lines.find('x2'), lines.find('x1'), lines.find('x3')], [second, 0, -1], 'out of order, and one the index has not');
    assert.equal(lines.foundAllInOrder, false);
    assert.equal(SessionIndexLine.parse('x2', file, second)?.size, 7);
    assert.equal(SessionIndexLine.parse('x1', file, 0)?.promptJson, '"make it 🚀"');
    assert.equal(SessionIndexLine.parse('x1', file, 0)?.figuresJson, fields.figuresJson, 'the last field of one line never runs into the next');

    for (const broken of ['x1\t12a\t1\t2\t{"id":1}\t\t""', 'x1\t12\tsoon\t2\t{"id":1}\t\t""', 'x1\t12\t1\t2\t["not a summary"]\t\t""', 'x1\t12\t1']) {
      assert.equal(SessionIndexLine.parse('x1', Buffer.from(broken), 0), undefined, broken);
    }
  });

  it('writes nothing when told to keep the index in memory (the read-only server)', async () => {
    const { dir } = twoSessions();
    const store = new SessionStore(dir, () => {}, { indexFile: null });
    await store.list();
    const again = await bytesReadDuring(() => store.list());
    assert.equal(again.bytes, 0, 'served from memory');
    assert.ok(!fs.existsSync(path.join(path.dirname(dir), `${path.basename(dir)}-index.json`)));
  });
});

describe('the --actor and --critic filters', () => {
  it('take every agent by its kind, as `run` names it, or by the name its sessions record', () => {
    for (const kind of AGENT_KINDS) {
      const summary = { actor_agent: AGENT_DISPLAY_NAMES[kind], critic_agent: 'Someone Else' } as SessionSummary;
      assert.ok(
        matchesFilter({ actor: kind }, summary, () => ''),
        kind,
      );
      assert.ok(
        matchesFilter({ actor: AGENT_DISPLAY_NAMES[kind].toUpperCase() }, summary, () => ''),
        AGENT_DISPLAY_NAMES[kind],
      );
      assert.ok(!matchesFilter({ critic: kind }, summary, () => ''), `${kind} is not the critic`);
    }
  });
});
