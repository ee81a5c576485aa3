import assert from 'node:assert/strict';
import { sessionStatsSchema } from '../../src/sessionFormat/sessionSummaries.js';
import type { UiServer } from '../../src/server/uiServer.js';
import { runCli } from '../support/cliProcess.js';
import { EXPECTED_BY_AGENTS, EXPECTED_STATS, writeStatsSessions } from '../support/statsSessions.js';
import { isolateHome, removeTempDirs, tempDir, type IsolatedHome } from '../support/testEnvironment.js';
import { request, startTestServer } from './serverClient.js';

describe('codeloops ui: GET /api/stats, the agentic metrics per task', () => {
  let home: IsolatedHome;
  let server: UiServer;

  before(async () => {
    home = isolateHome();
    home.restore(); // only the CLI children read it
    writeStatsSessions(home.sessionsDir);
    server = await startTestServer(home.sessionsDir, home.env);
  });

  after(async () => {
    await server?.close();
    removeTempDirs();
  });

  const stats = async (query = '') => {
    const reply = await request(server.port, `/api/stats${query}`);
    assert.equal(reply.status, 200, reply.body);
    return sessionStatsSchema.parse(reply.json());
  };

  it('counts a resume chain as one task, each metric as worked out by hand (statsSessions.ts), as `sessions stats --json` does', async () => {
    const all = await stats();
    const { sessions_over_time: _days, by_project: _projects, by_agents, ...figures } = all;
    assert.deepEqual(figures, EXPECTED_STATS);
    assert.deepEqual(by_agents, EXPECTED_BY_AGENTS);
    const cli = await runCli(['sessions', 'stats', '--json'], { cwd: tempDir(), env: home.env });
    assert.deepEqual(all, JSON.parse(cli.stdout));
  });

  it('takes the actor and critic as query parameters, with the other filters', async () => {
    const codex = await stats('?actor=codex&critic=claude');
    assert.deepEqual([codex.total_sessions, codex.total_tasks, codex.by_agents], [2, 2, [EXPECTED_BY_AGENTS[1]]]);
    const successes = await stats('?outcome=success&actor=Claude%20Code');
    assert.deepEqual([successes.total_sessions, successes.total_tasks, successes.total_iterations], [3, 3, 7]);
    const cli = await runCli(['sessions', 'stats', '--json', '--outcome', 'success', '--actor', 'Claude Code'], { cwd: tempDir(), env: home.env });
    assert.deepEqual(successes, JSON.parse(cli.stdout));
  });
});
