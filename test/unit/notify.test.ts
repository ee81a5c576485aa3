import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { NotifySettings } from '../../src/config/runSettings.js';
import { notify } from '../../src/notify/notify.js';
import { RunNotifier } from '../../src/notify/runNotifier.js';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';

/** A webhook on 127.0.0.1 keeping the JSON bodies it gets. */
async function receiver() {
  const bodies: unknown[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      bodies.push(JSON.parse(body));
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, bodies, close: () => new Promise((resolve) => server.close(resolve)) };
}

const settings = (overrides: Partial<NotifySettings>): NotifySettings => ({
  command: null,
  webhook: null,
  webhookHeaders: {},
  on: ['needs_input', 'finished', 'waiting', 'queue_finished'],
  include: ['question'],
  timeoutSecs: 10,
  ...overrides,
});

/** `notify`, the one call the limits (`waiting`) and the queue (`queue_finished`) make, on a real webhook and a real program. */
describe('notify: the events the loop does not report itself', () => {
  it('sends a wait with its agent, reason and end, and a queue’s end with its summary when included; an event `on` leaves out is not sent', async () => {
    const hook = await receiver();
    try {
      const webhook = settings({ webhook: hook.url, include: ['summary'] });
      const until = '2026-11-26T15:00:00.000Z';
      assert.deepEqual(await notify(webhook, { event: 'waiting', session_id: 's1', project: 'demo', agent: 'claude', reason: 'usage_limit', until }), []);
      await notify(webhook, { event: 'queue_finished', session_id: null, project: 'demo', outcome: null, summary: '2 of 3 tasks succeeded' });
      await notify({ ...webhook, on: ['finished'] }, { event: 'waiting', session_id: 's1', project: 'demo', agent: 'codex', reason: 'rate_limited', until });
      assert.deepEqual(hook.bodies, [
        { event: 'waiting', session_id: 's1', project: 'demo', outcome: null, agent: 'claude', reason: 'usage_limit', until },
        { event: 'queue_finished', session_id: null, project: 'demo', outcome: null, summary: '2 of 3 tasks succeeded' },
      ]);
    } finally {
      await hook.close();
    }
  });

  it('a loop’s wait (its agent_waiting event) is sent as `waiting`, with the session the loop started', async () => {
    const hook = await receiver();
    try {
      const notifier = new RunNotifier(settings({ webhook: hook.url }), '/work/demo', () => assert.fail('nothing fails'));
      const until = '2026-11-26T15:00:00.000Z';
      const timestamp = '2026-11-26T14:00:00.000Z';
      notifier.observe({ type: 'run_started', session_id: 's1', timestamp } as RunEvent);
      notifier.observe({ type: 'agent_waiting', iteration: 1, role: 'actor', agent: 'Claude Code', reason: 'usage_limit', until, timestamp });
      await notifier.settled();
      assert.deepEqual(hook.bodies, [
        { event: 'waiting', session_id: 's1', project: 'demo', outcome: null, agent: 'Claude Code', reason: 'usage_limit', until },
      ]);
    } finally {
      await hook.close();
    }
  });

  it('a wait is sent once, however many times the agent is refused in it; the next wait is sent again', async () => {
    const hook = await receiver();
    try {
      const notifier = new RunNotifier(settings({ webhook: hook.url }), '/work/demo', () => assert.fail('nothing fails'));
      const timestamp = '2026-11-26T14:00:00.000Z';
      notifier.observe({ type: 'run_started', session_id: 's1', timestamp } as RunEvent);
      const waiting = (iteration: number, tries: number, until: string): RunEvent => ({
        type: 'agent_waiting',
        iteration,
        role: 'actor',
        agent: 'Gemini CLI',
        reason: 'usage_limit',
        until,
        tries,
        timestamp,
      });
      for (const [tries, until] of [
        [1, '2026-11-26T14:00:04.000Z'],
        [2, '2026-11-26T14:00:14.000Z'],
        [3, '2026-11-26T14:00:34.000Z'],
      ] as const)
        notifier.observe(waiting(1, tries, until));
      notifier.observe(waiting(2, 1, '2026-11-26T15:00:00.000Z'));
      await notifier.settled();
      assert.deepEqual(
        hook.bodies.map((body) => (body as { until: string }).until),
        ['2026-11-26T14:00:04.000Z', '2026-11-26T15:00:00.000Z'],
      );
    } finally {
      await hook.close();
    }
  });

  it('gives up a program that hangs at the timeout and says so, without waiting for it', async () => {
    const failures = await notify(settings({ command: ['sleep', '30'], timeoutSecs: 0.5 }), {
      event: 'finished',
      session_id: 's1',
      project: 'demo',
      outcome: 'success',
      summary: null,
    });
    assert.deepEqual(failures, [{ channel: 'command', message: 'sleep did not finish within 0.5 s' }]);
  });

  it('says a program that cannot start could not start', async () => {
    const failures = await notify(settings({ command: ['/nonexistent/notifier'] }), {
      event: 'needs_input',
      session_id: 's1',
      project: 'demo',
      question: 'Which?',
    });
    assert.equal(failures.length, 1);
    assert.match(failures[0]!.message, /^\/nonexistent\/notifier could not start: .*ENOENT/);
  });

  it('a question too long for one argument, or holding a NUL, still reaches the program: cut in the middle, the NUL left out', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'codeloops-notify-'));
    try {
      const argvFile = path.join(folder, 'argv.json');
      const script = path.join(folder, 'record.mjs');
      fs.writeFileSync(script, `import fs from 'node:fs';\nfs.writeFileSync(${JSON.stringify(argvFile)}, JSON.stringify(process.argv.slice(2)));\n`);
      const question = `Which of these? 🙂\0 ${'x'.repeat(200_000)} THE END`;
      const failures = await notify(settings({ command: [process.execPath, script, '{question}'] }), {
        event: 'needs_input',
        session_id: 's1',
        project: 'demo',
        question,
      });
      assert.deepEqual(failures, []);
      const [sent] = JSON.parse(fs.readFileSync(argvFile, 'utf8')) as string[];
      assert.ok(sent!.startsWith('Which of these? 🙂 x') && sent!.endsWith('x THE END'), sent!.slice(0, 40));
      assert.ok(Buffer.byteLength(sent!) < 128 * 1024 && !sent!.includes('\0'), `${Buffer.byteLength(sent!)} bytes`);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('never says a webhook’s login, path, query or header values, even where fetch itself would quote them', async () => {
    const failures = await notify(
      settings({ webhook: 'http://user:S3CRET-PW@127.0.0.1:9/PATH-TOKEN?q=QUERY-SECRET', webhookHeaders: { Authorization: 'Bearer HEADER-SECRET' } }),
      { event: 'finished', session_id: 's1', project: 'demo', outcome: 'success', summary: null },
    );
    assert.equal(failures.length, 1);
    assert.match(failures[0]!.message, /^the webhook at http:\/\/127\.0\.0\.1:9 could not be reached/);
    for (const secret of ['user', 'S3CRET-PW', 'PATH-TOKEN', 'QUERY-SECRET', 'HEADER-SECRET'])
      assert.ok(!failures[0]!.message.includes(secret), failures[0]!.message);
  });
});
