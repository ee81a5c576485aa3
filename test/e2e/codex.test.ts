import assert from 'node:assert/strict';
import { codexToolOutputIncludes } from '../support/modelApi/openAiResponses.js';
import { objectsIn, type ModelRequest, type ScriptedReply } from '../support/modelApi/scripted.js';
import { describeRealAgent, UUID } from '../support/realAgentLoops.js';
import { GREETING_TASK, GREETING_WORK, isCriticRequest } from '../support/scriptedClaude.js';

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
  if (isCriticRequest(request)) {
    if (request.lastUserText.includes('+Hello, world'))
      return { text: 'Fixed.\n<decision>{"type":"done","summary":"greeting.txt says Hello, world","confidence":0.9}</decision>' };
    if (lastItem(request) === 'custom_tool_call_output') {
      return {
        text: '<decision>{"type":"continue","feedback":"greeting.txt says Helo: it must say Hello, world","remaining_issues":["typo"],"findings":[{"file":"greeting.txt","line":1,"severity":"error","message":"Helo is a typo"}]}</decision>',
      };
    }
    return { text: 'I will fix the typo myself.', toolCalls: [FIX_TYPO] };
  }
  if (request.lastUserText.includes('Reviewer feedback')) return lastItem(request) === 'message' ? { toolCalls: [FIX_TYPO] } : { text: 'Fixed the typo.' };
  if (lastItem(request) === 'message') return { text: 'Writing the file now.', toolCalls: [ADD_WITH_TYPO] };
  if (lastItem(request) === 'custom_tool_call_output')
    return { toolCalls: [{ name: 'exec_command', input: { cmd: 'echo "noted by a shell" > build-note.txt' } }] };
  return { text: 'Created greeting.txt and the build note.' };
}

describeRealAgent({
  agent: 'codex',
  title: 'end to end: the real Codex CLI against a scripted Responses API',
  model: () => scriptedCodex,
  runArgs: ['-p', GREETING_TASK, '-a', 'codex'],
  work: GREETING_WORK,
  twoIterations: {
    title: 'runs two iterations as actor and critic: edits with apply_patch and its shell; the read-only critic cannot write',
    start: { actor_agent: 'Codex', critic_agent: 'Codex' },
    iterations: [
      {
        // Two files changed: the patch and the shell edit. The critic's own edit was refused by its
        // sandbox, not reverted by the runner after the fact.
        fields: { critic_decision: 'CONTINUE', git_files_changed: 2, critic_reverted_files: undefined },
        diff: [/\+Helo, world/, /\+noted by a shell/],
        actorOutput: /Writing the file now\.\n→ file_change: add .*greeting\.txt\n→ shell: .*echo "noted by a shell" > build-note\.txt/,
      },
      { fields: { critic_decision: 'DONE' }, diff: [/-Helo, world\n\+Hello, world/] },
    ],
    // The thread id.
    agentSessionId: UUID,
    reportsCost: false,
    actorToolCalls: 2,
    checks: {
      'keeps the critic read-only: Codex refuses its edit and tells it why': ({ apis: [api] }) => {
        const criticFollowUps = api!.requests.filter((request) => isCriticRequest(request) && lastItem(request) === 'custom_tool_call_output');
        assert.equal(criticFollowUps.length, 1);
        assert.ok(codexToolOutputIncludes(criticFollowUps[0]!, 'read-only'), 'Codex told the critic its sandbox is read-only');
      },
    },
  },
  resume: {
    title: 'resumes a stopped session in the actor’s own Codex thread: the model sees the earlier conversation',
    // Its first request carries the earlier turn (the typo'd patch and the shell command) before the feedback.
    conversation: (request) => request.body.input,
    carries: [/Writing the file now\./, /Add File: greeting\.txt/],
    feedback: /greeting\.txt says Helo: it must say Hello, world/,
  },
});
