import assert from 'node:assert/strict';
import path from 'node:path';
import { GEMINI_MODEL } from '../support/modelApi/geminiApi.js';
import { isObject, objectsIn, type ModelRequest, type ScriptedReply } from '../support/modelApi/scripted.js';
import { describeRealAgent, UUID } from '../support/realAgentLoops.js';
import { agentRuns } from '../support/realAgents.js';
import { GREETING_TASK, GREETING_WORK, isCriticRequest } from '../support/scriptedClaude.js';

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
function scriptedGemini(repo: string) {
  const write = (content: string) => ({ name: 'write_file', input: { file_path: path.join(repo, 'greeting.txt'), content } });
  return (request: ModelRequest): ScriptedReply => {
    if (request.toolNames.length === 0) return { text: 'side request' };
    if (isCriticRequest(request)) {
      if (request.allUserText.includes('+Hello, world'))
        return { text: '<decision>{"type":"done","summary":"greeting.txt says Hello, world","confidence":0.9}</decision>' };
      if (answeredTool(request) === 'write_file') {
        return {
          text: '<decision>{"type":"continue","feedback":"greeting.txt says Helo: it must say Hello, world","remaining_issues":["typo"],"findings":[{"file":"greeting.txt","line":1,"severity":"error","message":"Helo is a typo"}]}</decision>',
        };
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

describeRealAgent({
  agent: 'gemini',
  title: 'end to end: the real Gemini CLI against a scripted Gemini API',
  model: scriptedGemini,
  runArgs: ['-p', GREETING_TASK, '-a', 'gemini', '-m', GEMINI_MODEL],
  work: GREETING_WORK,
  twoIterations: {
    title: 'runs two iterations as actor and critic: writes a file and runs a shell command; the critic in plan mode cannot write',
    start: { actor_agent: 'Gemini CLI', critic_model: GEMINI_MODEL },
    iterations: [
      {
        // Plan mode refused the critic's edit: nothing had to be reverted.
        fields: { critic_decision: 'CONTINUE', git_files_changed: 2, critic_reverted_files: undefined },
        diff: [/\+Helo, world/],
        actorOutput: /Writing the file now\.\n→ write_file: .*greeting\.txt\n→ run_shell_command: echo "noted by a shell" > build-note\.txt/,
      },
      { fields: { critic_decision: 'DONE' }, diff: [/-Helo, world\n\+Hello, world/] },
    ],
    agentSessionId: UUID,
    reportsCost: false,
    actorToolCalls: 2,
    checks: {
      'sends every turn to the model asked for': ({ apis: [api] }) => {
        assert.ok(api!.requests.every((request) => request.model === GEMINI_MODEL));
      },
      'keeps the critic in plan mode: no shell, and its write refused': ({ apis: [api] }) => {
        const criticRequests = api!.requests.filter(isCriticRequest);
        assert.ok(
          criticRequests.every((request) => !request.toolNames.includes('run_shell_command')),
          'no shell for the critic',
        );
        assert.match(toolResponses(criticRequests.find((request) => answeredTool(request) === 'write_file')!), /plans directory/);
      },
    },
  },
  resume: {
    title: 'resumes a stopped session in the actor’s own Gemini session, by its id: the model sees the earlier conversation',
    conversation: (request) => request.body.contents,
    carries: [/Writing the file now\./, /Helo, world/],
    feedback: /greeting\.txt says Helo: it must say Hello, world/,
    // The critic's session is the newest in the folder: `--resume latest` would pick it, not the actor's.
    check: ({ setup, stoppedId, actorSession }) => {
      const criticSession = agentRuns(setup.home, stoppedId).find((run) => run.role === 'critic')?.agent_session_id;
      assert.ok(criticSession && criticSession !== actorSession);
    },
  },
});
