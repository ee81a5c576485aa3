import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';
import { runCli } from '../support/cliProcess.js';
import type { ModelRequest, ScriptedReply } from '../support/modelApi/scripted.js';
import { scriptedApis, setUpRealAgents } from '../support/realAgentLoops.js';
import { sidecarEvents } from '../support/realAgents.js';
import { isCriticRequest } from '../support/scriptedClaude.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo } from '../support/testEnvironment.js';

const TASK = 'Write one.txt, then two.txt, each saying its own name.';
const TOKEN_CAP = 20_000;

describe('end to end: a budget crossed in the middle of a real Claude Code turn', () => {
  let releaseHeldToolCall = () => {};
  // Registered first, so it runs first: the held answer is let go before the APIs close.
  after(() => releaseHeldToolCall());
  const startApi = scriptedApis();

  it('stops the actor before its later tool calls run; resume with a raised cap finishes, counting on from the earlier totals', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    let resumed = false;
    let hungUpBeforeTheToolCall = false;
    // Only released if the runner failed to stop the actor: then two.txt gets written and the test says so.
    const held = new Promise<void>((resolve) => (releaseHeldToolCall = resolve));
    const write = (name: string) => ({ name: 'Write', input: { file_path: path.join(repo, name), content: `${name}\n` } });
    const responder = (request: ModelRequest): ScriptedReply => {
      if (request.toolNames.length === 0) return { text: 'Two files', inputTokens: 10 }; // side requests (titles)
      if (isCriticRequest(request)) {
        return { text: '<decision>{"type":"done","summary":"both files exist","confidence":0.9}</decision>', inputTokens: 1_000 };
      }
      if (!resumed) {
        // The first step is cheap; the model call after it reads a lot (its input tokens cross the cap
        // as it starts) and would then write two.txt.
        if (!request.hasToolResult) return { text: 'First file.', toolCalls: [write('one.txt')], inputTokens: 1_000 };
        return {
          text: 'Now the second file.',
          toolCalls: [write('two.txt')],
          inputTokens: 50_000,
          toolCallsAfter: { until: held, onHangUp: () => (hungUpBeforeTheToolCall = true) },
        };
      }
      if (!request.hasToolResult) return { toolCalls: [write('two.txt')], inputTokens: 2_000 };
      return { text: 'Wrote two.txt.', inputTokens: 2_000 };
    };
    const { env, home } = await setUpRealAgents(startApi, repo, [{ agent: 'claude', model: responder }]);

    const first = await runCli(['-p', TASK, '--json-output', '--max-tokens', String(TOKEN_CAP)], { cwd: repo, env });
    releaseHeldToolCall();
    assert.equal(first.code, 2, `stderr:\n${first.stderr}`);
    const stopped = JSON.parse(first.stdout);
    assert.equal(stopped.status, 'failed');
    assert.equal(stopped.stop_reason, 'budget_tokens');
    assert.equal(stopped.error_code, 'budget_exceeded');
    assert.match(stopped.error, new RegExp(`over the budget of ${TOKEN_CAP.toLocaleString('en-US')}`));
    assert.ok(stopped.total_tokens > TOKEN_CAP, `total_tokens ${stopped.total_tokens}`);

    // The step before the cap ran; the tool call after it never reached Claude Code.
    assert.equal(fs.readFileSync(path.join(repo, 'one.txt'), 'utf8'), 'one.txt\n');
    assert.equal(fs.existsSync(path.join(repo, 'two.txt')), false, 'the later tool call did not run');
    assert.ok(hungUpBeforeTheToolCall, 'Claude Code was stopped while the model was still streaming its turn');

    const { end } = assertValidSessionFile(stopped.session_file);
    assert.equal(end?.outcome, 'failed');
    assert.equal(end?.stop_reason, 'budget_tokens');
    const events = sidecarEvents(home, stopped.session_id);
    const actorRun = events.find((event) => event.type === 'agent_finished' && event.role === 'actor');
    assert.ok(actorRun?.type === 'agent_finished' && actorRun.interrupted, 'the actor was stopped as on an interrupt');
    assert.equal(
      events.some((event) => event.type === 'phase' && event.phase === 'critic'),
      false,
      'no critic after the cap',
    );
    const spends = events.filter((event): event is Extract<RunEvent, { type: 'spend' }> => event.type === 'spend');
    assert.ok(
      spends.some((spend) => spend.total_tokens > TOKEN_CAP),
      'the crossing total was reported',
    );

    // Carry on with a raised cap: the task finishes, and the totals go on from where they were.
    resumed = true;
    const second = await runCli(['resume', stopped.session_id, '--json-output', '--max-tokens', '500000'], { cwd: repo, env });
    assert.equal(second.code, 0, `stderr:\n${second.stderr}`);
    const finished = JSON.parse(second.stdout);
    assert.equal(finished.status, 'success');
    assert.equal(fs.readFileSync(path.join(repo, 'two.txt'), 'utf8'), 'two.txt\n');
    assert.ok(finished.total_tokens > stopped.total_tokens, `${finished.total_tokens} counts on from ${stopped.total_tokens}`);
    const { start } = assertValidSessionFile(finished.session_file);
    assert.equal(start.resumed_from, stopped.session_id);
  });
});
