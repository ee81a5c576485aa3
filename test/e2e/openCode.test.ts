import assert from 'node:assert/strict';
import path from 'node:path';
import { runEventSchema, type RunEvent } from '../../src/sessionFormat/runEvents.js';
import { runCli } from '../support/cliProcess.js';
import { anthropicMessages } from '../support/modelApi/anthropicMessages.js';
import { OPEN_CODE_MODEL, openAiChat, writeOpenCodeProjectConfig } from '../support/modelApi/openAiChat.js';
import { objectsIn, startModelApi, type ModelApi, type ModelRequest, type ScriptedReply } from '../support/modelApi/scripted.js';
import { CRITIC_MARK, installedVersion, realAgentHome, stopThenResume } from '../support/realAgents.js';
import { adapterFor } from '../../src/agents/adapterRegistry.js';
import { readJsonLines } from '../support/scriptedLoop.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo, git, removeTempDirs, treeOf } from '../support/testEnvironment.js';
import { stopRunners } from '../support/processes.js';

/** OpenCode's project config is the user's own file: committed, so it is not part of any diff. */
function repoWithOpenCode(api: ModelApi): string {
  const repo = createRepo({ files: { 'README.md': '# demo\n' } });
  writeOpenCodeProjectConfig(repo, api);
  git(repo, 'add', 'opencode.json');
  git(repo, 'commit', '-q', '-m', 'opencode config');
  return repo;
}

/** An actor that writes VERSION as 0.1, then 1.0.0 after review; a critic that asks for 1.0.0, then approves. */
function versionModel(repo: () => string) {
  return (request: ModelRequest): ScriptedReply => {
    if (request.toolNames.length === 0) return { text: 'Add a version file' }; // the title generator
    if (request.allUserText.includes(CRITIC_MARK)) {
      return request.allUserText.includes('+1.0.0')
        ? { text: 'Correct now.\n<decision>{"type":"done","summary":"VERSION holds 1.0.0","confidence":0.9}</decision>' }
        : { text: '<decision>{"type":"continue","feedback":"VERSION must hold 1.0.0, not 0.1","remaining_issues":["wrong version"]}</decision>' };
    }
    if (request.hasToolResult) return { text: 'Done.' };
    const fix = request.lastUserText.includes('VERSION must hold 1.0.0');
    return { toolCalls: [{ name: 'write', input: { filePath: path.join(repo(), 'VERSION'), content: fix ? '1.0.0\n' : '0.1\n' } }] };
  };
}

describe('end to end: the real OpenCode CLI against a scripted chat-completions API', () => {
  let openai: ModelApi | undefined;
  let anthropic: ModelApi | undefined;
  afterEach(async () => {
    // A test that fails halfway leaves no runner or agent behind for the tests after it.
    await stopRunners();
    await openai?.close();
    await anthropic?.close();
    openai = anthropic = undefined;
  });
  after(removeTempDirs);

  it('is a version the adapter lists as tested', () => {
    assert.ok(adapterFor('opencode').testedVersions.includes(installedVersion('opencode')), installedVersion('opencode'));
  });

  it('runs two iterations with OpenCode as actor and critic', async () => {
    let repo = '';
    openai = await startModelApi(
      openAiChat,
      versionModel(() => repo),
    );
    repo = repoWithOpenCode(openai);
    const { env, home } = realAgentHome({});
    const result = await runCli(['-p', 'Add a VERSION file holding 1.0.0', '-a', 'opencode', '-m', OPEN_CODE_MODEL, '--json-output'], { cwd: repo, env });
    assert.equal(result.code, 0, `stderr:\n${result.stderr}`);
    const outcome = JSON.parse(result.stdout);
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.iterations, 2);
    assert.equal(treeOf(repo).VERSION, '1.0.0\n');

    const { start, iterations } = assertValidSessionFile(outcome.session_file);
    const [first, second] = iterations;
    assert.equal(start.actor_agent, 'OpenCode');
    assert.equal(start.actor_model, OPEN_CODE_MODEL);
    assert.equal(first!.critic_decision, 'CONTINUE');
    assert.equal(first!.feedback, 'VERSION must hold 1.0.0, not 0.1');
    assert.match(first!.git_diff, /\+0\.1/);
    assert.match(first!.actor_output, /→ write: .*VERSION/);
    assert.equal(second!.critic_decision, 'DONE');
    assert.match(second!.git_diff, /-0\.1\n\+1\.0\.0/);

    // The critic ran as the read-only plan agent with no edit or write tool.
    const criticRequests = openai.requests.filter((request) => request.allUserText.includes(CRITIC_MARK) && request.toolNames.length > 0);
    assert.ok(criticRequests.length >= 2);
    for (const request of criticRequests) {
      assert.ok(!request.toolNames.includes('write') && !request.toolNames.includes('edit'), request.toolNames.join(', '));
    }

    const events = readJsonLines(path.join(home.dataHome, 'codeloops', 'sidecars', outcome.session_id, 'events.jsonl')).map((event) =>
      runEventSchema.parse(event),
    ) as RunEvent[];
    const actorRun = events.find((event) => event.type === 'agent_finished' && event.role === 'actor');
    assert.ok(actorRun?.type === 'agent_finished');
    assert.match(actorRun.agent_session_id ?? '', /^ses_/);
    assert.ok((actorRun.usage?.costUsd ?? 0) > 0, 'cost summed from step_finish');
    assert.equal(actorRun.tool_calls, 1);
    for (const run of events.filter((event) => event.type === 'agent_finished')) {
      assert.deepEqual(run.drift, { unknownEvents: 0, unknownFields: 0, examples: [] }, 'every event and field is one the adapter knows');
    }
    assert.deepEqual(openai.unexpected, [], 'the CLI asked only for model turns');
  });

  it('resumes a stopped session in the actor’s own OpenCode session (--session): the model sees the earlier conversation', async () => {
    let repo = '';
    openai = await startModelApi(
      openAiChat,
      versionModel(() => repo),
    );
    repo = repoWithOpenCode(openai);
    const { env, home } = realAgentHome({});
    const { actorSession, actorRequest } = await stopThenResume({
      repo,
      env,
      home,
      api: openai,
      runArgs: ['-p', 'Add a VERSION file holding 1.0.0', '-a', 'opencode', '-m', OPEN_CODE_MODEL],
      // Its first request with tools carries the earlier turn (the write of 0.1 and its result) before the feedback.
      isActorRequest: (request) => request.toolNames.length > 0 && !request.allUserText.includes(CRITIC_MARK),
    });
    assert.match(actorSession, /^ses_/);
    assert.equal(treeOf(repo).VERSION, '1.0.0\n');
    const conversation = JSON.stringify(actorRequest.body.messages);
    assert.match(conversation, /Add a VERSION file holding 1\.0\.0/, 'the first prompt');
    assert.ok(
      objectsIn(actorRequest.body.messages).some((message) => message.role === 'assistant' && JSON.stringify(message.tool_calls ?? []).includes('VERSION')),
      'the earlier write of VERSION',
    );
    assert.match(actorRequest.lastUserText, /VERSION must hold 1\.0\.0, not 0\.1/);
  });

  it('runs a loop with OpenCode as actor and Claude Code as critic', async () => {
    openai = await startModelApi(openAiChat, (request) => {
      if (request.toolNames.length === 0) return { text: 'Changelog' };
      if (request.hasToolResult) return { text: 'Changelog written with a shell command.' };
      return { toolCalls: [{ name: 'bash', input: { command: 'printf "# Changelog\\n" > CHANGELOG.md', description: 'write the changelog' } }] };
    });
    anthropic = await startModelApi(anthropicMessages, (request) =>
      request.allUserText.includes('+# Changelog')
        ? { text: '<decision>{"type":"done","summary":"CHANGELOG.md exists","confidence":0.8}</decision>' }
        : { text: '<decision>{"type":"continue","feedback":"no changelog yet"}</decision>' },
    );
    const repo = repoWithOpenCode(openai);
    const { env } = realAgentHome({ anthropic });
    const result = await runCli(['-p', 'Start a changelog', '--actor-agent', 'opencode', '--critic-agent', 'claude', '--json-output'], { cwd: repo, env });
    assert.equal(result.code, 0, `stderr:\n${result.stderr}`);
    const outcome = JSON.parse(result.stdout);
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.iterations, 1);
    assert.equal(treeOf(repo)['CHANGELOG.md'], '# Changelog\n');
    const { lines } = assertValidSessionFile(outcome.session_file);
    assert.equal(lines[0]!.actor_agent, 'OpenCode');
    assert.equal(lines[0]!.critic_agent, 'Claude Code');
    assert.equal(anthropic.requests.length, 1, 'the critic reviewed once');
    assert.deepEqual([...openai.unexpected, ...anthropic.unexpected], []);
  });
});
