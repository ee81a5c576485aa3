/**
 * `GET /api/sessions` of `codeloops ui` over 10,000 sessions, parsed by the client;
 * against the engine alone listing them and making the JSON in-process: what HTTP and
 * streaming add.
 */
import http from 'node:http';
import path from 'node:path';
import { startUiServer } from '../../src/server/uiServer.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { assertEqual, median, runBenchmark, time } from './benchmark.js';
import { LIST_SESSIONS, listFixture } from './fixtures.js';

async function medianOf(work: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run < 3; run++) times.push((await time(work)).ms);
  return median(times);
}

runBenchmark(async () => {
  const { dir } = listFixture();
  const server = await startUiServer({
    port: 0,
    sessionsDirectory: dir,
    sidecarDirOf: (id) => path.join(dir, '..', 'sidecars', id),
    assetsDirectory: path.join(process.cwd(), 'dist', 'webview'),
  });
  const fetchList = () =>
    new Promise<unknown[]>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port: server.port, path: '/api/sessions', headers: { host: `127.0.0.1:${server.port}` } }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown[]));
          response.on('error', reject);
        })
        .on('error', reject);
    });
  // Both keep the summary index in memory, as the server does.
  const store = new SessionStore(dir, () => {}, { indexFile: null });
  try {
    assertEqual((await fetchList()).length, LIST_SESSIONS, 'every session served'); // warms the page cache
    const ours = await medianOf(fetchList);
    // The baseline: the engine alone, listing and serializing, with no HTTP in between.
    await store.list();
    const baseline = await medianOf(async () => JSON.stringify(await store.list()));
    const ratio = ours / baseline;
    return {
      name: `GET /api/sessions, ${LIST_SESSIONS.toLocaleString('en-US')} sessions (codeloops ui)`,
      ours: `${ours.toFixed(0)} ms, parsed by the client`,
      baseline: `listing and JSON in-process: ${baseline.toFixed(0)} ms`,
      ratio,
      ratioText: `${ratio.toFixed(2)}× the time`,
      goal: '≤ 1.5× (HTTP and streaming cost little)',
      met: ratio <= 1.5,
    };
  } finally {
    await server.close();
  }
});
