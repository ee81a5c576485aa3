import assert from 'node:assert/strict';
import { runCli, stopCliRuns } from '../support/cliProcess.js';
import { GEMINI_MODEL, geminiApi } from '../support/modelApi/geminiApi.js';
import { openAiResponses } from '../support/modelApi/openAiResponses.js';
import { startModelApi, type ModelApi } from '../support/modelApi/scripted.js';
import { agentRuns, realAgentHome } from '../support/realAgents.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo, removeTempDirs, treeOf } from '../support/testEnvironment.js';

/**
 * Loops whose two roles are different agents, each against its own scripted API.
 * (OpenCode with Claude Code as critic is in openCode.test.ts.)
 */
describe('end to end: mixed agents, each role a different real CLI', () => {
  let apis: ModelApi[] = [];
  afterEach(async () => {
    await stopCliRuns();
    await Promise.all(apis.map((api) => api.close()));
    apis = [];
  });
  after(removeTempDirs);

  it('Codex as actor, Gemini CLI as critic: the critic reviews the diff Codex made', async () => {
    const responses = await startModelApi(openAiResponses, (request) =>
      request.hasToolResult
        ? { text: 'Started the changelog with a shell command.' }
        : { toolCalls: [{ name: 'exec_command', input: { cmd: 'printf "# Changelog\\n" > CHANGELOG.md' } }] },
    );
    const gemini = await startModelApi(geminiApi, (request) =>
      request.allUserText.includes('+# Changelog')
        ? { text: '<decision>{"type":"done","summary":"CHANGELOG.md exists","confidence":0.8}</decision>' }
        : { text: '<decision>{"type":"continue","feedback":"no changelog yet"}</decision>' },
    );
    apis = [responses, gemini];
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const { env, home } = realAgentHome({ responses, gemini }, ['codex', 'gemini']);
    const result = await runCli(
      ['-p', 'Start a changelog', '--actor-agent', 'codex', '--critic-agent', 'gemini', '--critic-model', GEMINI_MODEL, '--json-output'],
      {
        cwd: repo,
        env,
      },
    );
    assert.equal(result.code, 0, `stderr:\n${result.stderr}`);
    const outcome = JSON.parse(result.stdout);
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.iterations, 1);
    assert.equal(treeOf(repo)['CHANGELOG.md'], '# Changelog\n');
    const { start } = assertValidSessionFile(outcome.session_file);
    assert.equal(start.actor_agent, 'Codex');
    assert.equal(start.critic_agent, 'Gemini CLI');
    assert.equal(gemini.requests.filter((request) => request.toolNames.length > 0).length, 1, 'the critic reviewed once');
    assert.ok(agentRuns(home, outcome.session_id).every((run) => run.succeeded));
    assert.deepEqual([...responses.unexpected, ...gemini.unexpected], []);
  });
});
