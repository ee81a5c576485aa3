import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runEventSchema, type RunEvent } from '../../src/sessionFormat/runEvents.js';
import { runCli } from '../support/cliProcess.js';
import { anthropicMessages } from '../support/modelApi/anthropicMessages.js';
import { startModelApi, type ModelApi } from '../support/modelApi/scripted.js';
import { GREETING_TASK as TASK, isCriticRequest as isCritic, scriptedGreetingModel as scriptedClaude } from '../support/scriptedClaude.js';
import { installedVersion, realAgentHome } from '../support/realAgents.js';
import { adapterFor } from '../../src/agents/adapterRegistry.js';
import { readJsonLines } from '../support/scriptedLoop.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo, removeTempDirs, treeOf } from '../support/testEnvironment.js';

describe('end to end: the real Claude Code CLI against a scripted Messages API', () => {
  let api: ModelApi;
  let resumeApi: ModelApi | undefined;
  after(async () => {
    await api?.close();
    await resumeApi?.close();
    removeTempDirs();
  });

  it('is a version the adapter lists as tested', () => {
    const version = /\d+\.\d+\.\d+/.exec(installedVersion('claude'))?.[0];
    assert.ok(version && adapterFor('claude').testedVersions.includes(version), `claude ${version}`);
  });

  it('runs two iterations: writes a file with a typo and a shell edit, gets CONTINUE, fixes it, gets DONE', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    api = await startModelApi(anthropicMessages, scriptedClaude(repo));
    const { env, home } = realAgentHome({ anthropic: api });
    const result = await runCli(['-p', TASK, '--json-output', '--critic-model', 'sonnet'], { cwd: repo, env });
    assert.equal(result.code, 0, `stderr:\n${result.stderr}`);
    const outcome = JSON.parse(result.stdout);
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.iterations, 2);
    assert.equal(outcome.summary, 'greeting.txt says Hello, world');
    assert.equal(outcome.confidence, 0.93);

    // The work itself, on disk.
    assert.deepEqual(treeOf(repo), { 'README.md': '# demo\n', 'greeting.txt': 'Hello, world\n', 'build-note.txt': 'noted by a shell\n' });

    // The session file, line by line, in the documented format.
    const { start, iterations, end } = assertValidSessionFile(outcome.session_file);
    const [first, second] = iterations;
    assert.equal(start.actor_agent, 'Claude Code');
    assert.equal(start.critic_model, 'sonnet');
    assert.equal(start.prompt, TASK);
    assert.equal(first!.critic_decision, 'CONTINUE');
    assert.equal(first!.feedback, 'greeting.txt says Helo: it must say Hello, world');
    assert.deepEqual(first!.remaining_issues, ['typo in greeting.txt']);
    assert.equal(first!.git_files_changed, 2, 'the Write and the shell edit');
    assert.match(first!.git_diff, /\+Helo, world/);
    assert.match(first!.git_diff, /\+noted by a shell/);
    assert.match(first!.actor_output, /Writing the file now\.\n→ Write: .*greeting\.txt\n→ Bash: echo "noted by a shell" > build-note\.txt/);
    assert.equal(second!.critic_decision, 'DONE');
    assert.equal(second!.feedback, null);
    assert.match(second!.git_diff, /-Helo, world\n\+Hello, world/);
    assert.equal(second!.git_files_changed, 1);
    assert.equal(end?.outcome, 'success');

    // What the real CLI sent: the continuation prompt carried the feedback; the critic
    // could not edit (its tool list has no Write or Edit) and ran on the requested model.
    const actorRequests = api.requests.filter((request) => request.toolNames.length > 0 && !isCritic(request));
    assert.ok(
      actorRequests.some(
        (request) =>
          request.lastUserText.includes('greeting.txt says Helo: it must say Hello, world') && request.lastUserText.includes('- typo in greeting.txt'),
      ),
    );
    const criticRequests = api.requests.filter(isCritic);
    assert.equal(criticRequests.length, 2);
    for (const request of criticRequests) {
      assert.ok(!request.toolNames.includes('Write') && !request.toolNames.includes('Edit'), `critic tools: ${request.toolNames.join(', ')}`);
      assert.match(request.model, /sonnet/);
    }
    assert.ok(actorRequests.every((request) => request.toolNames.includes('Write') && request.toolNames.includes('Bash')));

    // The sidecar record: agent session ids, tool calls, tokens and cost from the real stream.
    const sidecar = path.join(home.dataHome, 'codeloops', 'sidecars', outcome.session_id);
    const events = readJsonLines(path.join(sidecar, 'events.jsonl')).map((event) => runEventSchema.parse(event)) as RunEvent[];
    const finished = events.filter((event): event is Extract<RunEvent, { type: 'agent_finished' }> => event.type === 'agent_finished');
    assert.equal(finished.length, 4);
    for (const run of finished) {
      assert.equal(run.succeeded, true);
      assert.match(run.agent_session_id ?? '', /^[0-9a-f-]{36}$/);
      assert.ok((run.usage?.costUsd ?? 0) > 0 && (run.usage?.inputTokens ?? 0) > 0, JSON.stringify(run.usage));
      assert.deepEqual(run.drift, { unknownEvents: 0, unknownFields: 0, examples: [] }, 'every event and field is one the adapter knows');
    }
    assert.equal(finished[0]!.tool_calls, 2);
    const raw = fs.readFileSync(path.join(sidecar, 'iteration-1-actor.stdout'), 'utf8');
    assert.match(raw.split('\n')[0]!, /"type":"system","subtype":"init"/);
    assert.deepEqual(api.unexpected, [], 'the CLI asked only for model turns');
  });

  it('resumes a stopped session in the actor’s own Claude Code session: the model sees the earlier conversation', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    resumeApi = await startModelApi(anthropicMessages, scriptedClaude(repo));
    const { env, home } = realAgentHome({ anthropic: resumeApi });
    const first = await runCli(['-p', TASK, '--json-output', '-n', '1'], { cwd: repo, env });
    assert.equal(first.code, 1, `stderr:\n${first.stderr}`);
    const stopped = JSON.parse(first.stdout);
    assert.equal(stopped.status, 'max_iterations_reached');
    const sidecar = (id: string) =>
      readJsonLines(path.join(home.dataHome, 'codeloops', 'sidecars', id, 'events.jsonl')).map((event) => runEventSchema.parse(event)) as RunEvent[];
    const actorSession = sidecar(stopped.session_id).find((event) => event.type === 'agent_finished' && event.role === 'actor');
    assert.ok(actorSession?.type === 'agent_finished' && actorSession.agent_session_id);
    const requestsBefore = resumeApi.requests.length;

    const resumed = await runCli(['resume', stopped.session_id, '--json-output', '-n', '2'], { cwd: repo, env });
    assert.equal(resumed.code, 0, `stderr:\n${resumed.stderr}`);
    const outcome = JSON.parse(resumed.stdout);
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.iterations, 2);
    assert.deepEqual(treeOf(repo), { 'README.md': '# demo\n', 'greeting.txt': 'Hello, world\n', 'build-note.txt': 'noted by a shell\n' });
    const { lines } = assertValidSessionFile(outcome.session_file);
    assert.equal(lines[0]!.resumed_from, stopped.session_id);
    assert.deepEqual(
      lines.filter((line) => line.type === 'iteration').map((line) => line.iteration_number),
      [2],
    );

    // The resumed actor ran in its earlier Claude Code session: its first request carries that
    // conversation (the typo'd Write and its reply) before the feedback.
    const actorRequest = resumeApi.requests.slice(requestsBefore).find((request) => request.toolNames.length > 0 && !isCritic(request));
    assert.ok(actorRequest, 'the resumed actor reached the model');
    const earlier = JSON.stringify(actorRequest.body.messages);
    assert.match(earlier, /Writing the file now\./, 'the earlier assistant turn is in the conversation');
    assert.match(earlier, /Helo, world/);
    assert.match(actorRequest.lastUserText, /greeting\.txt says Helo: it must say Hello, world/);
    const resumedRun = sidecar(outcome.session_id).find((event) => event.type === 'agent_finished' && event.role === 'actor');
    assert.ok(resumedRun?.type === 'agent_finished' && resumedRun.succeeded);
  });
});
