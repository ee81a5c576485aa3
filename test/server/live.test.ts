import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sessionViewResponseSchema } from '../../src/server/apiPayloads.js';
import type { UiServer } from '../../src/server/uiServer.js';
import { startCli } from '../support/cliProcess.js';
import { carryOnNaming, configureScriptedAgent, done, type AgentScript } from '../support/scriptedAgent.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { createRepo, isolateHome, removeTempDirs, type IsolatedHome } from '../support/testEnvironment.js';
import { eventually, LiveClient, request, startTestServer } from './serverClient.js';
import { stopRunners } from '../support/processes.js';

/** Three iterations; the first actor run pauses so a viewer can join in the middle of it. */
const THREE_ITERATIONS: AgentScript = {
  actor: [
    [{ print: 'working on step one' }, { sleep: 2000 }, { write: { path: 'one.txt', content: '1\n' } }],
    [{ print: 'working on step two' }, { write: { path: 'two.txt', content: '2\n' } }],
    [{ print: 'working on step three' }, { write: { path: 'three.txt', content: '3\n' } }],
  ],
  critic: [[carryOnNaming('Now step two')], [carryOnNaming('Now step three')], [done('All three steps', 0.9)]],
};

/** A loop run by the built CLI, as a user runs it in a terminal, writing into `home`. */
function startLoop(home: IsolatedHome, script: AgentScript, prompt: string) {
  configureScriptedAgent(home.configHome, script);
  const repo = createRepo({ files: { 'README.md': '# project\n' } });
  return startCli(['-p', prompt], { cwd: repo, env: home.env });
}

describe('codeloops ui: live updates (Server-Sent Events)', () => {
  // A test that fails halfway leaves no runner or agent behind for the tests after it.
  afterEach(stopRunners);
  let home: IsolatedHome;
  let server: UiServer;
  const clients: LiveClient[] = [];
  const connect = (rawPath?: string): LiveClient => {
    const client = new LiveClient(server.port, rawPath);
    clients.push(client);
    return client;
  };

  before(async () => {
    home = isolateHome();
    home.restore();
    fs.mkdirSync(home.sessionsDir, { recursive: true });
    server = await startTestServer(home.sessionsDir, home.env, { liveLingerMs: 50 });
  });

  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });

  after(async () => {
    await server?.close();
    removeTempDirs();
  });

  it('follows a loop run in a terminal: created, each iteration, completed, and its phases', async () => {
    const everyone = connect();
    const opened = await everyone.opened;
    assert.equal(opened.headers['content-type'], 'text/event-stream; charset=utf-8');
    assert.equal(opened.headers['cache-control'], 'no-store');
    assert.deepEqual(await everyone.waitFor('hello'), { type: 'hello', running: [] });

    const run = startLoop(home, THREE_ITERATIONS, 'Write three files');
    const created = await everyone.waitFor('session_created');
    assert.equal(created.running, true, 'its loop holds the repository lock');
    assert.equal(created.summary.prompt_preview, 'Write three files');
    const { id } = created;

    // A viewer that opens mid-iteration gets the iteration so far, then what follows.
    await everyone.waitFor('run_event', (event) => event.id === id && event.event.type === 'phase' && event.event.phase === 'actor');
    const viewer = connect(`/api/sessions/live?session=${id}`);
    assert.deepEqual(await viewer.waitFor('hello'), { type: 'hello', running: [id] });
    await viewer.waitFor(
      'run_event',
      (event) => event.event.type === 'agent_event' && event.event.event.kind === 'text' && event.event.event.text === 'working on step one',
    );
    const replayed = viewer.events
      .slice(1, 3)
      .map((event) => (event.type === 'run_event' ? `${event.event.type}:${'iteration' in event.event ? event.event.iteration : ''}` : event.type));
    assert.deepEqual(replayed, ['iteration_started:1', 'phase:1'], 'the replay starts at the iteration');
    const during = sessionViewResponseSchema.parse((await request(server.port, `/api/sessions/${id}/view`)).json());
    assert.equal(during.running, true);
    assert.equal(during.view.end, null);

    const result = await run.done;
    assert.equal(result.code, 0, result.stderr);
    const completed = await everyone.waitFor('session_completed', (event) => event.id === id);
    assert.equal(completed.outcome, 'success');
    assert.equal(completed.summary.iterations, 3);
    await everyone.waitFor('run_event', (event) => event.id === id && event.event.type === 'run_finished');

    // The order a user sees: created, iteration 1, 2, 3, completed.
    const sessionEvents = everyone.events
      .filter((event) => 'id' in event && event.id === id && event.type !== 'run_event')
      .map((event) => (event.type === 'session_updated' ? `updated:${event.iteration}` : event.type));
    assert.deepEqual(sessionEvents, ['session_created', 'updated:1', 'updated:2', 'updated:3', 'session_completed']);
    // Everyone gets the phases; only the session's viewer gets what the agents said.
    const phases = everyone.events.flatMap((event) =>
      event.type === 'run_event' && event.event.type === 'phase' && event.event.status === 'started' ? [`${event.event.iteration}:${event.event.phase}`] : [],
    );
    assert.deepEqual(phases, ['1:actor', '1:diff', '1:critic', '2:actor', '2:diff', '2:critic', '3:actor', '3:diff', '3:critic']);
    assert.ok(
      !everyone.events.some((event) => event.type === 'run_event' && event.event.type === 'agent_event'),
      'agent output goes only to the session’s viewers',
    );
    assert.ok(viewer.events.some((event) => event.type === 'run_event' && event.event.type === 'critic_decision' && event.event.decision === 'DONE'));
    assert.ok(
      viewer.events.some(
        (event) =>
          event.type === 'run_event' &&
          event.event.type === 'agent_event' &&
          event.event.event.kind === 'text' &&
          event.event.event.text === 'working on step three',
      ),
    );
    const after = sessionViewResponseSchema.parse((await request(server.port, `/api/sessions/${id}/view`)).json());
    assert.equal(after.running, false);
    assert.equal(after.view.iterations.length, 3);
  });

  it('reports sessions written by other programs, several lines at once, and deletions', async () => {
    const everyone = connect();
    await everyone.waitFor('hello');
    const id = writeSession(home.sessionsDir, [startLine({ prompt: 'Written by the original codeloops', timestamp: '2025-05-01T10:00:00Z' })]);
    const created = await everyone.waitFor('session_created', (event) => event.id === id);
    assert.equal(created.running, false, 'no loop of ours holds its (made-up) folder');
    const file = path.join(home.sessionsDir, `${id}.jsonl`);
    // Two iterations in one write: still one event per iteration, in order.
    fs.appendFileSync(file, JSON.stringify(iterationLine(1)) + '\n' + JSON.stringify(iterationLine(2)) + '\n');
    await everyone.waitFor('session_updated', (event) => event.id === id && event.iteration === 2);
    fs.appendFileSync(file, JSON.stringify(endLine({ outcome: 'max_iterations_reached', iterations: 2 })) + '\n');
    const completed = await everyone.waitFor('session_completed', (event) => event.id === id);
    assert.equal(completed.outcome, 'max_iterations_reached');
    fs.rmSync(file);
    await everyone.waitFor('session_removed', (event) => event.id === id);
    const mine = everyone.events
      .filter((event) => 'id' in event && event.id === id)
      .map((event) => (event.type === 'session_updated' ? `updated:${event.iteration}` : event.type));
    assert.deepEqual(mine, ['session_created', 'updated:1', 'updated:2', 'session_completed', 'session_removed']);
  });

  it('releases the watcher, the followers and the streams when clients leave mid-stream', async () => {
    const run = startLoop(
      home,
      { actor: [[{ write: { path: 'busy.txt', content: 'busy\n' } }, { print: 'busy' }, { sleep: 1500 }]], critic: [[done()]] },
      'Keep busy',
    );
    const first = connect();
    await first.waitFor('hello');
    const { id } = await first.waitFor('session_created', (event) => event.summary.prompt_preview === 'Keep busy');
    const watchers = Array.from({ length: 5 }, (_, index) => connect(index % 2 === 0 ? `/api/sessions/live?session=${id}` : undefined));
    for (const client of watchers) await client.waitFor('hello');
    assert.equal(server.hub.stats().subscribers, 6);
    assert.equal(server.hub.stats().followers, 1, 'one follower for the running loop, however many watch it');
    for (const client of [first, ...watchers]) client.close(); // the tabs are closed while the loop runs
    await eventually(() => server.openStreams() === 0, 'the streams to close');
    await eventually(
      () => {
        const stats = server.hub.stats();
        return stats.subscribers === 0 && !stats.watching && stats.followers === 0;
      },
      `the hub to let go (${JSON.stringify(server.hub.stats())})`,
    );
    assert.equal((await run.done).code, 0);
    // Nothing was left listening: a new client starts afresh and sees the session ended.
    const later = connect();
    await later.waitFor('hello', (event) => !event.running.includes(id));
  });

  it('answers HEAD with the stream’s headers and no body, and refuses a bad session id', async () => {
    const head = await request(server.port, '/api/sessions/live', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-type'], 'text/event-stream; charset=utf-8');
    assert.equal(head.body, '');
    const bad = await request(server.port, '/api/sessions/live?session=%2e%2e%2fx');
    assert.equal(bad.status, 400);
    const unknownParameter = await request(server.port, '/api/sessions/live?sesion=x');
    assert.equal(unknownParameter.status, 400);
    await eventually(() => !server.hub.stats().watching, 'nothing watched for refused requests');
  });
});
