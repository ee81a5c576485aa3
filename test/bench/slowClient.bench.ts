/**
 * Clients that read the first piece of a 200 MB session from `codeloops ui`
 * (`GET /api/sessions/:id`) and then stop reading, 8 of them: the server's memory each
 * costs, against a server that reads the file whole for each request.
 */
import { runBenchmark } from './benchmark.js';
import { slowClientFixture } from './fixtures.js';
import { idleRss, startCodeloopsUi, startWholeFileServer, withSlowClients } from './serverProcess.js';

const SLOW_CLIENTS_EACH = 8;

runBenchmark(async () => {
  const fixture = slowClientFixture();
  const ours = await startCodeloopsUi(fixture.dataHome);
  let perClient: number;
  try {
    const idle = await idleRss(ours);
    const clients = await withSlowClients(ours, `/api/sessions/${fixture.id}`, SLOW_CLIENTS_EACH);
    perClient = (clients.rssMb - idle) / SLOW_CLIENTS_EACH;
    clients.close();
  } finally {
    ours.stop();
  }
  // The baseline, with fewer clients (each costs the file).
  const whole = await startWholeFileServer(fixture.file);
  let baselinePerClient: number;
  try {
    const idle = whole.rssMb();
    const clients = await withSlowClients(whole, '/', 3);
    baselinePerClient = (clients.rssMb - idle) / 3;
    clients.close();
  } finally {
    whole.stop();
  }
  const ratio = perClient / baselinePerClient;
  return {
    name: `a client that stops reading a ${(fixture.bytes / 1024 / 1024).toFixed(0)} MB session (\`GET /api/sessions/:id\`, codeloops ui), ${SLOW_CLIENTS_EACH} of them`,
    ours: `${perClient.toFixed(1)} MB of server RSS a client`,
    baseline: `a server reading the file whole per request: ${baselinePerClient.toFixed(0)} MB a client`,
    ratio,
    ratioText: `${ratio.toFixed(3)}× the memory`,
    goal: '≤ 16 MB a client',
    met: perClient <= 16,
  };
});
