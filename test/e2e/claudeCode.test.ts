import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describeRealAgent, isActorTurn, UUID } from '../support/realAgentLoops.js';
import { sidecarFolder } from '../support/realAgents.js';
import { GREETING_TASK, GREETING_WORK, isCriticRequest, scriptedGreetingModel } from '../support/scriptedClaude.js';

// The scripted model is shared with `npm run demo` and the editor's user flow: test/support/scriptedClaude.ts.
describeRealAgent({
  agent: 'claude',
  title: 'end to end: the real Claude Code CLI against a scripted Messages API',
  model: scriptedGreetingModel,
  runArgs: ['-p', GREETING_TASK, '--critic-model', 'sonnet'],
  work: GREETING_WORK,
  twoIterations: {
    title: 'runs two iterations: writes a file with a typo and a shell edit, gets CONTINUE, fixes it, gets DONE',
    outcome: { summary: 'greeting.txt says Hello, world', confidence: 0.93 },
    start: { actor_agent: 'Claude Code', critic_model: 'sonnet', prompt: GREETING_TASK },
    iterations: [
      {
        // Two files changed: the Write and the shell edit.
        fields: {
          critic_decision: 'CONTINUE',
          feedback: 'greeting.txt says Helo: it must say Hello, world',
          remaining_issues: ['typo in greeting.txt'],
          git_files_changed: 2,
        },
        diff: [/\+Helo, world/, /\+noted by a shell/],
        actorOutput: /Writing the file now\.\n→ Write: .*greeting\.txt\n→ Bash: echo "noted by a shell" > build-note\.txt/,
      },
      { fields: { critic_decision: 'DONE', feedback: null, git_files_changed: 1 }, diff: [/-Helo, world\n\+Hello, world/] },
    ],
    agentSessionId: UUID,
    reportsCost: true,
    actorToolCalls: 2,
    checks: {
      'carries the critic’s feedback and remaining issues into the actor’s next prompt; the actor may Write and run Bash': ({ apis: [api] }) => {
        const actorRequests = api!.requests.filter(isActorTurn);
        assert.ok(
          actorRequests.some(
            (request) =>
              request.lastUserText.includes('greeting.txt says Helo: it must say Hello, world') && request.lastUserText.includes('- typo in greeting.txt'),
          ),
        );
        assert.ok(actorRequests.every((request) => request.toolNames.includes('Write') && request.toolNames.includes('Bash')));
      },
      'runs the critic on the requested model, unable to edit: its tools have no Write or Edit': ({ apis: [api] }) => {
        const criticRequests = api!.requests.filter(isCriticRequest);
        assert.equal(criticRequests.length, 2);
        for (const request of criticRequests) {
          assert.ok(!request.toolNames.includes('Write') && !request.toolNames.includes('Edit'), `critic tools: ${request.toolNames.join(', ')}`);
          assert.match(request.model, /sonnet/);
        }
      },
      'keeps the raw stream of each run in the sidecar, as Claude Code wrote it': ({ home, outcome }) => {
        const raw = fs.readFileSync(path.join(sidecarFolder(home, outcome.session_id), 'iteration-1-actor.stdout'), 'utf8');
        assert.match(raw.split('\n')[0]!, /"type":"system","subtype":"init"/);
      },
    },
  },
  resume: {
    title: 'resumes a stopped session in the actor’s own Claude Code session: the model sees the earlier conversation',
    // Its first request carries that conversation (the typo'd Write and its reply) before the feedback.
    conversation: (request) => request.body.messages,
    carries: [/Writing the file now\./, /Helo, world/],
    feedback: /greeting\.txt says Helo: it must say Hello, world/,
  },
});
