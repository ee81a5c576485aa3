import path from 'node:path';
import type { ModelRequest, ScriptedReply } from './modelApi/scripted.js';
import { CRITIC_MARK } from './realAgents.js';

/** The task the scripted model below knows how to do (and the scripted Codex and Gemini of their end-to-end tests). */
export const GREETING_TASK = 'Create greeting.txt containing exactly "Hello, world" and a build note made with a shell command.';

/** The files the greeting task leaves beside the README, once the typo is fixed. */
export const GREETING_WORK = { 'greeting.txt': 'Hello, world\n', 'build-note.txt': 'noted by a shell\n' };

/** Whether a request is the critic's: its prompt opens with the critic's role. */
export function isCriticRequest(request: ModelRequest): boolean {
  return request.allUserText.includes(CRITIC_MARK);
}

/**
 * A scripted model for the real Claude Code CLI: an actor that makes a typo (and a
 * shell edit) and fixes it after review, and a critic that catches the typo, then
 * approves. Used by the end-to-end test and by `npm run demo`, whose critic first runs
 * the project's tests with its Bash tool (`criticRuns`), so that its DONE is verified.
 */
export function scriptedGreetingModel(repo: string, { criticRuns }: { criticRuns?: string } = {}) {
  return (request: ModelRequest): ScriptedReply => {
    if (request.toolNames.length === 0) return { text: 'Greeting task' }; // side requests (titles)
    if (isCriticRequest(request)) {
      if (criticRuns && !request.hasToolResult) {
        return { text: 'Running the tests.', toolCalls: [{ name: 'Bash', input: { command: criticRuns, description: 'run the tests' } }] };
      }
      return request.allUserText.includes('+Hello, world')
        ? { text: 'The typo is fixed and the note exists.\n<decision>{"type":"done","summary":"greeting.txt says Hello, world","confidence":0.93}</decision>' }
        : {
            text: 'greeting.txt has a typo.\n<decision>{"type":"continue","feedback":"greeting.txt says Helo: it must say Hello, world","remaining_issues":["typo in greeting.txt"],"findings":[{"file":"greeting.txt","line":1,"severity":"error","message":"Helo is a typo"}]}</decision>',
          };
    }
    const secondIteration = request.allUserText.includes('Reviewer feedback');
    if (request.hasToolResult) return { text: secondIteration ? 'Fixed the typo.' : 'Created greeting.txt and the build note.' };
    return secondIteration
      ? { toolCalls: [{ name: 'Write', input: { file_path: path.join(repo, 'greeting.txt'), content: 'Hello, world\n' } }] }
      : {
          text: 'Writing the file now.',
          toolCalls: [
            { name: 'Write', input: { file_path: path.join(repo, 'greeting.txt'), content: 'Helo, world\n' } },
            { name: 'Bash', input: { command: 'echo "noted by a shell" > build-note.txt', description: 'write the build note' } },
          ],
        };
  };
}
