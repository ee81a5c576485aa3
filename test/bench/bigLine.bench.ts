/**
 * A session whose one iteration line is 50 MB, served by `codeloops ui` on each route
 * that reads it (the whole session, its view, the iteration, its diff): the server's
 * peak memory above idle while serving, and where it settles after; against a server
 * sending the file as one buffer.
 */
import fs from 'node:fs';
import http from 'node:http';
import { endLine, iterationLine, startLine } from '../support/sessionFixtures.js';
import { runBenchmark } from './benchmark.js';
import { keptSession, type KeptSession } from './fixtures.js';
import { idleRss, startCodeloopsUi, startWholeFileServer, type ServerProcess } from './serverProcess.js';

const LINE_MB = 50;

/** The session, made once and kept. */
function bigLineFixture(): KeptSession {
  return keptSession('big-line', '2025-05-02T10-00-00Z_50mbln', (fd) => {
    const lines = [
      startLine({ prompt: 'One line of 50 MB', timestamp: '2025-05-02T10:00:00Z' }),
      iterationLine(1, { actor_output: 'x'.repeat(LINE_MB * 1024 * 1024) }),
      endLine(),
    ];
    fs.writeSync(fd, lines.map((line) => JSON.stringify(line) + '\n').join(''));
  });
}

/** The peak of a server's RSS above where it was, while one client fetches a route whole (the kernel's high-water mark, reset first). */
async function peakWhileServing(server: ServerProcess, route: string): Promise<number> {
  const before = server.rssMb();
  fs.writeFileSync(`/proc/${server.pid}/clear_refs`, '5');
  await new Promise<void>((resolve, reject) =>
    http
      .get({ host: '127.0.0.1', port: server.port, path: route, headers: { host: `127.0.0.1:${server.port}` }, agent: false }, (response) => {
        response.resume();
        response.on('end', resolve);
      })
      .on('error', reject),
  );
  const peak = Number(/^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024;
  return peak - before;
}

runBenchmark(async () => {
  const fixture = bigLineFixture();
  const ours = await startCodeloopsUi(fixture.dataHome);
  let worst = 0;
  let after: number;
  let idle: number;
  try {
    idle = await idleRss(ours);
    for (const route of ['', '/view', '/iterations/1', '/diff']) worst = Math.max(worst, await peakWhileServing(ours, `/api/sessions/${fixture.id}${route}`));
    await new Promise((resolve) => setTimeout(resolve, 500));
    after = ours.rssMb();
  } finally {
    ours.stop();
  }
  const whole = await startWholeFileServer(fixture.file);
  let baseline: number;
  try {
    baseline = await peakWhileServing(whole, '/');
  } finally {
    whole.stop();
  }
  const ratio = worst / LINE_MB;
  return {
    name: 'a session line of 50 MB served by `codeloops ui` (the whole session, its view, the iteration, its diff)',
    ours: `peak +${worst.toFixed(0)} MB on the worst route; ${(after - idle).toFixed(0)} MB above idle afterwards`,
    baseline: `a server sending the file as one buffer: peak +${baseline.toFixed(0)} MB`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the line`,
    goal: '≤ 2× the line while serving, back to idle after',
    met: ratio <= 2 && after - idle < 16,
  };
});
