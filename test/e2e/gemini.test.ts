import assert from 'node:assert/strict';
import path from 'node:path';
import { adapterFor } from '../../src/agents/adapterRegistry.js';
import { runCli } from '../support/cliProcess.js';
import { stopRunners } from '../support/processes.js';
import { GEMINI_MODEL, geminiApi } from '../support/modelApi/geminiApi.js';
import { isObject, objectsIn, startModelApi, type ModelApi, type ModelRequest, type ScriptedReply } from '../support/modelApi/scripted.js';
import { agentRuns, CRITIC_MARK, installedVersion, realAgentHome, stopThenResume } from '../support/realAgents.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo, removeTempDirs, treeOf } from '../support/testEnvironment.js';

const TASK = 'Create greeting.txt containing exactly "Hello, world" and a build note made with a shell command.';

/** The tool whose result ends the conversation Gemini CLI sent, if it ends with one. */
function answeredTool(request: ModelRequest): string | undefined {
  if (!request.hasToolResult) return undefined;
  const last = objectsIn(request.body.contents).at(-1);
  const response = objectsIn(last?.parts).find((part) => isObject(part.functionResponse))?.functionResponse;
  return isObject(response) && typeof response.name === 'string' ? response.name : undefined;
}

/** The text of the function responses in the conversation: what the tools told the model. */
function toolResponses(request: ModelRequest): string {
  return JSON.stringify(objectsIn(request.body.contents).flatMap((content) => objectsIn(content.parts).filter((part) => isObject(part.functionResponse))));
}

/**
 * A scripted model for the real Gemini CLI: an actor that writes greeting.txt with a
 * typo (`write_file`) and a build note (`run_shell_command`), then fixes the typo
 * after review; a critic that first tries to fix the file itself (plan mode must
 * refuse), then asks the actor to, then approves.
 */
function scriptedGemini(repo: () => string) {
  const write = (content: string) => ({ name: 'write_file', input: { file_path: path.join(repo(), 'greeting.txt'), content } });
  return (request: ModelRequest): ScriptedReply => {
    if (request.toolNames.length === 0) return { text: 'side request' };
    if (request.allUserText.includes(CRITIC_MARK)) {
      if (request.allUserText.includes('+Hello, world'))
        return { text: '<decision>{"type":"done","summary":"greeting.txt says Hello, world","confidence":0.9}</decision>' };
      if (answeredTool(request) === 'write_file') {
        return { text: '<decision>{"type":"continue","feedback":"greeting.txt says Helo: it must say Hello, world","remaining_issues":["typo"]}</decision>' };
      }
      return { text: 'I will fix the typo myself.', toolCalls: [write('Hello, world\n')] };
    }
    if (request.lastUserText.includes('Reviewer feedback'))
      return answeredTool(request) ? { text: 'Fixed the typo.' } : { toolCalls: [write('Hello, world\n')] };
    if (answeredTool(request) === undefined) return { text: 'Writing the file now.', toolCalls: [write('Helo, world\n')] };
    if (answeredTool(request) === 'write_file')
      return { toolCalls: [{ name: 'run_shell_command', input: { command: 'echo "noted by a shell" > build-note.txt', description: 'build note' } }] };
    return { text: 'Created greeting.txt and the build note.' };
  };
}

describe('end to end: the real Gemini CLI against a scripted Gemini API', () => {
  let api: ModelApi | undefined;
  afterEach(async () => {
    await stopRunners();
    await api?.close();
    api = undefined;
  });
  after(removeTempDirs);

  it('is a version the adapter lists as tested', () => {
    assert.ok(adapterFor('gemini').testedVersions.includes(installedVersion('gemini')), installedVersion('gemini'));
  });

  it('runs two iterations as actor and critic: writes a file and runs a shell command; the critic in plan mode cannot write', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    api = await startModelApi(
      geminiApi,
      scriptedGemini(() => repo),
    );
    const { env, home } = realAgentHome({ gemini: api }, ['gemini']);
    const result = await runCli(['-p', TASK, '-a', 'gemini', '-m', GEMINI_MODEL, '--json-output'], { cwd: repo, env });
    assert.equal(result.code, 0, `stderr:\n${result.stderr}`);
    const outcome = JSON.parse(result.stdout);
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.iterations, 2);
    assert.deepEqual(treeOf(repo), { 'README.md': '# demo\n', 'greeting.txt': 'Hello, world\n', 'build-note.txt': 'noted by a shell\n' });

    const { start, iterations } = assertValidSessionFile(outcome.session_file);
    const [first, second] = iterations;
    assert.equal(start.actor_agent, 'Gemini CLI');
    assert.equal(start.critic_model, GEMINI_MODEL);
    assert.equal(first!.critic_decision, 'CONTINUE');
    assert.equal(first!.git_files_changed, 2);
    assert.match(first!.git_diff, /\+Helo, world/);
    assert.match(first!.actor_output, /Writing the file now\.\n→ write_file: .*greeting\.txt\n→ run_shell_command: echo "noted by a shell" > build-note\.txt/);
    assert.equal(first!.critic_reverted_files, undefined, 'plan mode refused the edit; nothing had to be reverted');
    assert.equal(second!.critic_decision, 'DONE');
    assert.match(second!.git_diff, /-Helo, world\n\+Hello, world/);

    // Every turn went to the model asked for; the critic had no shell and its write was refused.
    assert.ok(api.requests.every((request) => request.model === GEMINI_MODEL));
    const criticRequests = api.requests.filter((request) => request.allUserText.includes(CRITIC_MARK));
    assert.ok(
      criticRequests.every((request) => !request.toolNames.includes('run_shell_command')),
      'no shell for the critic',
    );
    assert.match(toolResponses(criticRequests.find((request) => answeredTool(request) === 'write_file')!), /plans directory/);

    const runs = agentRuns(home, outcome.session_id);
    assert.equal(runs.length, 4);
    for (const run of runs) {
      assert.equal(run.succeeded, true, run.failure_reason ?? '');
      assert.match(run.agent_session_id ?? '', /^[0-9a-f-]{36}$/);
      assert.ok((run.usage?.inputTokens ?? 0) > 0, JSON.stringify(run.usage));
      assert.deepEqual(run.drift, { unknownEvents: 0, unknownFields: 0, examples: [] }, 'every event and field is one the adapter knows');
    }
    assert.equal(runs[0]!.tool_calls, 2);
    assert.deepEqual(api.unexpected, [], 'the CLI asked only for model turns');
  });

  it('resumes a stopped session in the actor’s own Gemini session, by its id: the model sees the earlier conversation', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    api = await startModelApi(
      geminiApi,
      scriptedGemini(() => repo),
    );
    const { env, home } = realAgentHome({ gemini: api }, ['gemini']);
    // The critic's session is the newest in the folder: `--resume latest` would pick it, not the actor's.
    const { stoppedId, actorSession, actorRequest } = await stopThenResume({ repo, env, home, api, runArgs: ['-p', TASK, '-a', 'gemini', '-m', GEMINI_MODEL] });
    const criticSession = agentRuns(home, stoppedId).find((run) => run.role === 'critic')?.agent_session_id;
    assert.ok(criticSession && criticSession !== actorSession);
    assert.equal(treeOf(repo)['greeting.txt'], 'Hello, world\n');
    const conversation = JSON.stringify(actorRequest.body.contents);
    assert.match(conversation, /Writing the file now\./);
    assert.match(conversation, /Helo, world/);
    assert.match(actorRequest.lastUserText, /greeting\.txt says Helo: it must say Hello, world/);
  });
});
