import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { adapterFor } from '../../src/agents/adapterRegistry.js';
import { runCli } from '../support/cliProcess.js';
import { stopRunners } from '../support/processes.js';
import { codexToolOutputIncludes, openAiResponses } from '../support/modelApi/openAiResponses.js';
import { objectsIn, startModelApi, type ModelApi, type ModelRequest, type ScriptedReply } from '../support/modelApi/scripted.js';
import { agentRuns, CRITIC_MARK, installedVersion, realAgentHome, stopThenResume } from '../support/realAgents.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo, removeTempDirs, treeOf } from '../support/testEnvironment.js';

const TASK = 'Create greeting.txt containing exactly "Hello, world" and a build note made with a shell command.';

/** A patch for Codex's freeform `apply_patch` tool, as a model writes one. */
const patch = (body: string) => ({ name: 'apply_patch', input: { input: `*** Begin Patch\n${body}*** End Patch\n` } });
const ADD_WITH_TYPO = patch('*** Add File: greeting.txt\n+Helo, world\n');
const FIX_TYPO = patch('*** Update File: greeting.txt\n@@\n-Helo, world\n+Hello, world\n');

/** The type of the last item of the conversation Codex sent: what the model answers. */
function lastItem(request: ModelRequest): string | undefined {
  return objectsIn(request.body.input).at(-1)?.type as string | undefined;
}

/**
 * A scripted model for the real Codex: an actor that writes greeting.txt with a typo
 * (with `apply_patch`) and a build note (with its shell tool), then fixes the typo
 * after review; a critic that first tries to fix the typo itself (its read-only
 * sandbox must refuse), then asks the actor to, then approves.
 */
function scriptedCodex(request: ModelRequest): ScriptedReply {
  if (request.allUserText.includes(CRITIC_MARK)) {
    if (request.lastUserText.includes('+Hello, world'))
      return { text: 'Fixed.\n<decision>{"type":"done","summary":"greeting.txt says Hello, world","confidence":0.9}</decision>' };
    if (lastItem(request) === 'custom_tool_call_output') {
      return { text: '<decision>{"type":"continue","feedback":"greeting.txt says Helo: it must say Hello, world","remaining_issues":["typo"]}</decision>' };
    }
    return { text: 'I will fix the typo myself.', toolCalls: [FIX_TYPO] };
  }
  if (request.lastUserText.includes('Reviewer feedback')) return lastItem(request) === 'message' ? { toolCalls: [FIX_TYPO] } : { text: 'Fixed the typo.' };
  if (lastItem(request) === 'message') return { text: 'Writing the file now.', toolCalls: [ADD_WITH_TYPO] };
  if (lastItem(request) === 'custom_tool_call_output')
    return { toolCalls: [{ name: 'exec_command', input: { cmd: 'echo "noted by a shell" > build-note.txt' } }] };
  return { text: 'Created greeting.txt and the build note.' };
}

describe('end to end: the real Codex CLI against a scripted Responses API', () => {
  let api: ModelApi | undefined;
  afterEach(async () => {
    await stopRunners();
    await api?.close();
    api = undefined;
  });
  after(removeTempDirs);

  it('is a version the adapter lists as tested', () => {
    const version = /\d+\.\d+\.\d+/.exec(installedVersion('codex'))?.[0];
    assert.ok(version && adapterFor('codex').testedVersions.includes(version), `codex ${version}`);
  });

  it('runs two iterations as actor and critic: edits with apply_patch and its shell; the read-only critic cannot write', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    api = await startModelApi(openAiResponses, scriptedCodex);
    const { env, home } = realAgentHome({ responses: api }, ['codex']);
    const result = await runCli(['-p', TASK, '-a', 'codex', '--json-output'], { cwd: repo, env });
    assert.equal(result.code, 0, `stderr:\n${result.stderr}`);
    const outcome = JSON.parse(result.stdout);
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.iterations, 2);
    assert.deepEqual(treeOf(repo), { 'README.md': '# demo\n', 'greeting.txt': 'Hello, world\n', 'build-note.txt': 'noted by a shell\n' });

    const { start, iterations } = assertValidSessionFile(outcome.session_file);
    const [first, second] = iterations;
    assert.equal(start.actor_agent, 'Codex');
    assert.equal(start.critic_agent, 'Codex');
    assert.equal(first!.critic_decision, 'CONTINUE');
    assert.equal(first!.git_files_changed, 2, 'the patch and the shell edit');
    assert.match(first!.git_diff, /\+Helo, world/);
    assert.match(first!.git_diff, /\+noted by a shell/);
    assert.match(first!.actor_output, /Writing the file now\.\n→ file_change: add .*greeting\.txt\n→ shell: .*echo "noted by a shell" > build-note\.txt/);
    // The critic's own edit was refused by its sandbox, not reverted by the runner after the fact.
    assert.equal(first!.critic_reverted_files, undefined);
    assert.equal(second!.critic_decision, 'DONE');
    assert.match(second!.git_diff, /-Helo, world\n\+Hello, world/);

    const criticFollowUps = api.requests.filter((request) => request.allUserText.includes(CRITIC_MARK) && lastItem(request) === 'custom_tool_call_output');
    assert.equal(criticFollowUps.length, 1);
    assert.ok(codexToolOutputIncludes(criticFollowUps[0]!, 'read-only'), 'Codex told the critic its sandbox is read-only');

    const runs = agentRuns(home, outcome.session_id);
    assert.equal(runs.length, 4);
    for (const run of runs) {
      assert.equal(run.succeeded, true, run.failure_reason ?? '');
      assert.match(run.agent_session_id ?? '', /^[0-9a-f-]{36}$/, 'the thread id');
      assert.ok((run.usage?.inputTokens ?? 0) > 0, JSON.stringify(run.usage));
      assert.deepEqual(run.drift, { unknownEvents: 0, unknownFields: 0, examples: [] }, 'every event and field is one the adapter knows');
    }
    assert.equal(runs[0]!.tool_calls, 2);
    assert.deepEqual(api.unexpected, [], 'the CLI asked only for model turns');
  });

  it('resumes a stopped session in the actor’s own Codex thread: the model sees the earlier conversation', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    api = await startModelApi(openAiResponses, scriptedCodex);
    const { env, home } = realAgentHome({ responses: api }, ['codex']);
    const { actorRequest } = await stopThenResume({ repo, env, home, api, runArgs: ['-p', TASK, '-a', 'codex'] });
    assert.equal(treeOf(repo)['greeting.txt'], 'Hello, world\n');
    // Its first request carries the earlier turn (the typo'd patch and the shell command) before the feedback.
    const conversation = JSON.stringify(actorRequest.body.input);
    assert.match(conversation, /Writing the file now\./);
    assert.match(conversation, /Add File: greeting\.txt/);
    assert.match(actorRequest.lastUserText, /greeting\.txt says Helo: it must say Hello, world/);
    assert.ok(fs.existsSync(path.join(repo, 'build-note.txt')));
  });
});
