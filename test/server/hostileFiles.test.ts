import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { apiErrorSchema, sessionListSchema, sessionViewResponseSchema } from '../../src/server/apiPayloads.js';
import { asUserWhoCannotReadEverything, HOSTILE_SESSIONS, mkfifo, writeHostileSessions } from '../support/hostileFiles.js';
import { isolateHome, removeTempDirs, type IsolatedHome } from '../support/testEnvironment.js';
import { LiveClient, request, startUiProcess, type UiProcess } from './serverClient.js';

/** Long enough for any honest answer; a request still unanswered then is stuck on a file. */
const ANSWER_MS = 10_000;

/**
 * `codeloops ui` as its own process (a server stuck on a file must fail a test, not
 * take the test run with it), on a sessions folder with FIFOs, folders, links out of
 * it and unreadable files named like sessions.
 */
describe('codeloops ui on files that are not what they seem', () => {
  let home: IsolatedHome;
  let ui: UiProcess;
  let good: string;
  const get = (rawPath: string) => request(ui.port, rawPath, { timeoutMs: ANSWER_MS });
  const errorOf = (body: unknown) => apiErrorSchema.parse(body).error;

  before(async () => {
    home = isolateHome();
    home.restore();
    ({ good } = writeHostileSessions(home));
    // The good session's sidecar record is a FIFO.
    mkfifo(path.join(home.dataHome, 'codeloops', 'sidecars', good, 'events.jsonl'));
    const as = asUserWhoCannotReadEverything(home);
    if (as.uid !== undefined) fs.chmodSync(path.join(home.dataHome, 'codeloops', 'sidecars'), 0o755);
    ui = await startUiProcess(['--no-open', '--port', '0'], home.env, as);
  });
  after(async () => {
    ui?.child.kill('SIGKILL');
    await ui?.exited;
    removeTempDirs();
  });

  it('lists only the sessions, skipping what is not one', async () => {
    const reply = await get('/api/sessions');
    assert.equal(reply.status, 200);
    assert.deepEqual(
      sessionListSchema
        .parse(reply.json())
        .map((summary) => summary.id)
        .sort(),
      [good, 'inside'].sort(),
    );
    assert.doesNotMatch(reply.body, /SECRET|never read/);
  });

  it('answers 422 for each, naming the file and what it is, on every route', async () => {
    for (const [id, reason] of HOSTILE_SESSIONS) {
      for (const route of ['', '/view', '/diff', '/iterations/1']) {
        const reply = await get(`/api/sessions/${id}${route}`);
        assert.equal(reply.status, 422, `${id}${route}: ${reply.body}`);
        assert.match(errorOf(reply.json()), reason, `${id}${route}`);
        assert.doesNotMatch(reply.body, /SECRET|\bat .*\.js:\d+/, 'no content from outside, no stack trace');
      }
    }
  });

  it('never blocks: with more FIFO requests open than the thread pool has threads, it still answers', async () => {
    const stuck = Array.from({ length: 8 }, (_, index) => get(`/api/sessions/fifo${['', '/view', '/diff'][index % 3]}`));
    // A viewer following the session whose record is a FIFO.
    const live = new LiveClient(ui.port, `/api/sessions/live?session=${good}`);
    try {
      await live.waitFor('hello', () => true, ANSWER_MS);
      const stats = await get('/api/stats');
      assert.equal(stats.status, 200);
      for (const reply of await Promise.all(stuck)) assert.equal(reply.status, 422);
    } finally {
      live.close();
    }
  });

  it('shows a session whose sidecar record is a FIFO from its own lines, and says why', async () => {
    const reply = await get(`/api/sessions/${good}/view`);
    assert.equal(reply.status, 200, reply.body);
    const { view } = sessionViewResponseSchema.parse(reply.json());
    assert.deepEqual(
      view.iterations.map((iteration) => iteration.critic_decision),
      ['DONE'],
    );
    assert.ok(
      view.warnings.some((warning) => /events\.jsonl is a named pipe \(FIFO\), not a file: the sidecar record was not read/.test(warning)),
      view.warnings.join('\n'),
    );
    assert.equal((await get(`/api/sessions/${good}/iterations/1`)).status, 200);
  });
});
