import assert from 'node:assert/strict';
import path from 'node:path';
import { OPEN_CODE_MODEL } from '../support/modelApi/openAiChat.js';
import { objectsIn, type ModelRequest, type ScriptedReply } from '../support/modelApi/scripted.js';
import { describeRealAgent, isAgentTurn } from '../support/realAgentLoops.js';
import { isCriticRequest } from '../support/scriptedClaude.js';

/** An actor that writes VERSION as 0.1, then 1.0.0 after review; a critic that asks for 1.0.0, then approves. */
function versionModel(repo: string) {
  return (request: ModelRequest): ScriptedReply => {
    if (request.toolNames.length === 0) return { text: 'Add a version file' }; // the title generator
    if (isCriticRequest(request)) {
      return request.allUserText.includes('+1.0.0')
        ? { text: 'Correct now.\n<decision>{"type":"done","summary":"VERSION holds 1.0.0","confidence":0.9}</decision>' }
        : {
            text: '<decision>{"type":"continue","feedback":"VERSION must hold 1.0.0, not 0.1","remaining_issues":["wrong version"],"findings":[{"file":"VERSION","line":1,"severity":"error","message":"VERSION must hold 1.0.0"}]}</decision>',
          };
    }
    if (request.hasToolResult) return { text: 'Done.' };
    const fix = request.lastUserText.includes('VERSION must hold 1.0.0');
    return { toolCalls: [{ name: 'write', input: { filePath: path.join(repo, 'VERSION'), content: fix ? '1.0.0\n' : '0.1\n' } }] };
  };
}

// OpenCode with Claude Code as critic is in mixedAgents.test.ts.
describeRealAgent({
  agent: 'opencode',
  title: 'end to end: the real OpenCode CLI against a scripted chat-completions API',
  model: versionModel,
  runArgs: ['-p', 'Add a VERSION file holding 1.0.0', '-a', 'opencode', '-m', OPEN_CODE_MODEL],
  work: { VERSION: '1.0.0\n' },
  twoIterations: {
    title: 'runs two iterations with OpenCode as actor and critic',
    start: { actor_agent: 'OpenCode', actor_model: OPEN_CODE_MODEL },
    iterations: [
      {
        fields: { critic_decision: 'CONTINUE', feedback: 'VERSION must hold 1.0.0, not 0.1' },
        diff: [/\+0\.1/],
        actorOutput: /→ write: .*VERSION/,
      },
      { fields: { critic_decision: 'DONE' }, diff: [/-0\.1\n\+1\.0\.0/] },
    ],
    agentSessionId: /^ses_/,
    // Summed from step_finish.
    reportsCost: true,
    actorToolCalls: 1,
    checks: {
      'runs the critic as the read-only plan agent, with no edit or write tool': ({ apis: [api] }) => {
        const criticRequests = api!.requests.filter((request) => isCriticRequest(request) && isAgentTurn(request));
        assert.ok(criticRequests.length >= 2);
        for (const request of criticRequests) {
          assert.ok(!request.toolNames.includes('write') && !request.toolNames.includes('edit'), request.toolNames.join(', '));
        }
      },
    },
  },
  resume: {
    title: 'resumes a stopped session in the actor’s own OpenCode session (--session): the model sees the earlier conversation',
    // Its first request with tools carries the earlier turn (the write of 0.1 and its result) before the feedback.
    conversation: (request) => request.body.messages,
    carries: [/Add a VERSION file holding 1\.0\.0/],
    feedback: /VERSION must hold 1\.0\.0, not 0\.1/,
    check: ({ actorRequest }) => {
      assert.ok(
        objectsIn(actorRequest.body.messages).some((message) => message.role === 'assistant' && JSON.stringify(message.tool_calls ?? []).includes('VERSION')),
        'the earlier write of VERSION',
      );
    },
  },
});
