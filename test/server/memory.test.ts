import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { isolateHome, removeTempDirs, type IsolatedHome } from '../support/testEnvironment.js';
import { eventually, startUiProcess, type UiProcess } from './serverClient.js';

const MB = 1024 * 1024;
const LINE_BYTES = 50 * MB;

/** The server's resident memory and its peak since the last reset, from /proc (Linux). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Starts counting the peak again from now (clear_refs 5 resets VmHWM). */
function resetPeak(pid: number): void {
  fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** A whole answer, counted but not kept. */
function fetchAll(port: number, rawPath: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: rawPath, headers: { host: `127.0.0.1:${port}` }, agent: false }, (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => (bytes += chunk.length));
        response.on('end', () => resolve({ status: response.statusCode!, bytes }));
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

/**
 * `codeloops ui` as its own process, its memory read from /proc: what a client can
 * make it hold. A session of 50 MB in one line, and one of 90 MB in 60 lines.
 */
describe('codeloops ui keeps its memory whatever clients ask for', function () {
  let home: IsolatedHome;
  let ui: UiProcess;
  let big: string;
  let long: string;

  before(async function () {
    if (!fs.existsSync('/proc/self/clear_refs')) this.skip();
    home = isolateHome();
    home.restore();
    big = writeSession(home.sessionsDir, [
      startLine({ prompt: 'One line of 50 MB', timestamp: '2025-04-01T10:00:00Z' }),
      iterationLine(1, { actor_output: 'x'.repeat(LINE_BYTES), git_diff: `diff --git a/f b/f\n${'+a line\n'.repeat(300_000)}` }),
      endLine(),
    ]);
    long = writeSession(home.sessionsDir, [
      startLine({ prompt: 'Sixty iterations of 1.5 MB', timestamp: '2025-04-02T10:00:00Z' }),
      ...Array.from({ length: 60 }, (_, index) => iterationLine(index + 1, { actor_output: 'o'.repeat(1_500_000) })),
      endLine({ iterations: 60 }),
    ]);
    ui = await startUiProcess(['--no-open', '--port', '0'], home.env);
    await fetchAll(ui.port, '/api/sessions');
  });
  after(async () => {
    ui?.child.kill('SIGKILL');
    await ui?.exited;
    removeTempDirs();
  });

  it('serves a line of 50 MB on every route with less than twice its size, and gives it back afterwards', async function () {
    this.timeout(300_000);
    const pid = ui.child.pid!;
    for (const route of [`/api/sessions/${big}`, `/api/sessions/${big}/view`, `/api/sessions/${big}/iterations/1`, `/api/sessions/${big}/diff`]) {
      const baseline = memoryOf(pid).rss;
      resetPeak(pid);
      const reply = await fetchAll(ui.port, route);
      assert.equal(reply.status, 200, route);
      const peak = memoryOf(pid).peak - baseline;
      assert.ok(peak <= 2 * LINE_BYTES, `${route}: ${(peak / MB).toFixed(0)} MB more while serving a ${LINE_BYTES / MB} MB line`);
      // V8 hands an idle heap's pages back when its memory reducer runs, seconds
      // after the last allocation and later on a loaded machine: the ceiling is wide.
      await eventually(
        () => memoryOf(pid).rss - baseline < 16 * MB,
        `${route}: the server back to its size (now ${((memoryOf(pid).rss - baseline) / MB).toFixed(0)} MB more)`,
        60_000,
      );
    }
  });

  it('holds a client that stops reading to a buffer, not to the session it asked for', async () => {
    const pid = ui.child.pid!;
    const baseline = memoryOf(pid).rss;
    const clients = await Promise.all(
      Array.from(
        { length: 8 },
        () =>
          new Promise<http.ClientRequest>((resolve, reject) => {
            const request = http.get(
              { host: '127.0.0.1', port: ui.port, path: `/api/sessions/${long}`, headers: { host: `127.0.0.1:${ui.port}` }, agent: false },
              (response) => {
                // It reads the first piece, then nothing more: a stuck tab, a script that forgot.
                response.once('data', () => {
                  response.pause();
                  resolve(request);
                });
              },
            );
            request.on('error', reject);
          }),
      ),
    );
    try {
      // The server stops reading once the clients' buffers are full: its memory stops growing.
      let previous = -1;
      let steady = 0;
      await eventually(
        () => {
          const now = memoryOf(pid).rss;
          steady = Math.abs(now - previous) < MB ? steady + 1 : 0;
          previous = now;
          return steady >= 20;
        },
        'the server to stop reading ahead',
        30_000,
      );
      const perClient = (memoryOf(pid).rss - baseline) / clients.length;
      assert.ok(
        perClient <= 16 * MB,
        `${(perClient / MB).toFixed(1)} MB a slow client, for a session of ${(fs.statSync(`${home.sessionsDir}/${long}.jsonl`).size / MB).toFixed(0)} MB`,
      );
    } finally {
      for (const client of clients) client.destroy();
    }
  });
});
