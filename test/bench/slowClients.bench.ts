/**
 * 50 clients that stop reading a 200 MB session, all from one `codeloops ui`: the
 * server's memory then, against the same server idle.
 */
import { runBenchmark } from './benchmark.js';
import { slowClientFixture } from './fixtures.js';
import { idleRss, startCodeloopsUi, withSlowClients } from './serverProcess.js';

runBenchmark(async () => {
  const fixture = slowClientFixture();
  const server = await startCodeloopsUi(fixture.dataHome);
  try {
    const idle = await idleRss(server);
    const clients = await withSlowClients(server, `/api/sessions/${fixture.id}`, 50);
    clients.close();
    const ratio = clients.rssMb / idle;
    return {
      name: `50 clients that stop reading a ${(fixture.bytes / 1024 / 1024).toFixed(0)} MB session, one \`codeloops ui\``,
      ours: `server RSS ${clients.rssMb.toFixed(0)} MB`,
      baseline: `the same server idle: ${idle.toFixed(0)} MB`,
      ratio,
      ratioText: `${ratio.toFixed(1)}× idle (+${(clients.rssMb - idle).toFixed(0)} MB)`,
      goal: '< 1 GB',
      met: clients.rssMb < 1024,
    };
  } finally {
    server.stop();
  }
});
