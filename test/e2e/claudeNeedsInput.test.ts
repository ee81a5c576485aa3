import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runSummarySchema } from '../../src/sessionFormat/runEvents.js';
import { runCli } from '../support/cliProcess.js';
import type { ModelRequest, Responder, ScriptedReply } from '../support/modelApi/scripted.js';
import { scriptedApis, setUpRealAgents } from '../support/realAgentLoops.js';
import { isCriticRequest } from '../support/scriptedClaude.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo } from '../support/testEnvironment.js';

const QUESTION = 'Which region should the bucket be created in?';
const ANSWER = 'eu-west-1, our data stays in the EU.';

/** An actor that cannot know the region: it asks, and once told writes it down; a critic that accepts the file. */
function regionModel(repo: string): Responder {
  return (request: ModelRequest): ScriptedReply => {
    if (request.toolNames.length === 0) return { text: 'Bucket task' };
    if (isCriticRequest(request)) return { text: 'The region is set.\n<decision>{"type":"done","summary":"region set","confidence":0.9}</decision>' };
    const told = request.allUserText.includes('Their answer, in their words');
    if (!told) return { text: `I cannot pick the region myself: it is a product decision.\n<needs_input>${QUESTION}</needs_input>` };
    if (request.hasToolResult) return { text: 'Wrote the region.' };
    return { toolCalls: [{ name: 'Write', input: { file_path: path.join(repo, 'region.txt'), content: 'eu-west-1\n' } }] };
  };
}

/**
 * "Needs you" with the real Claude Code CLI in both roles against a scripted Messages
 * API: the actor ends its answer with <needs_input>, the headless run ends with the
 * question, and `resume --answer` gives the next actor request the answer.
 */
describe('end to end: the real Claude Code CLI asks the user (<needs_input>)', () => {
  const startApi = scriptedApis();

  it('headless, the question ends the run without asking the critic; resume --answer carries it on with the answer in the next actor request', async () => {
    const repo = createRepo({ files: { 'README.md': '# infra\n' } });
    const {
      env,
      apis: [api],
    } = await setUpRealAgents(startApi, repo, [{ agent: 'claude', model: regionModel(repo) }]);

    const run = await runCli(['-p', 'Create the storage bucket config', '--json-output'], { cwd: repo, env });
    assert.equal(run.code, 2, run.stderr);
    const summary = runSummarySchema.parse(JSON.parse(run.stdout));
    assert.equal(summary.error_code, 'needs_input');
    assert.equal(summary.error, QUESTION);
    assert.equal(api!.requests.filter(isCriticRequest).length, 0, 'the critic did not run for the iteration that asked');
    assert.deepEqual(assertValidSessionFile(summary.session_file).iterations[0]!.needs_input, { from: 'actor', question: QUESTION });

    const resumed = await runCli(['resume', summary.session_id, '--answer', ANSWER, '--json-output'], { cwd: repo, env });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(runSummarySchema.parse(JSON.parse(resumed.stdout)).status, 'success');
    const told = api!.requests.find((request) => !isCriticRequest(request) && request.toolNames.length > 0 && request.lastUserText.includes('Their answer'));
    assert.ok(told, 'the actor request after the answer');
    assert.ok(told.lastUserText.includes(`You asked the user: ${QUESTION}\nTheir answer, in their words:\n\`\`\`\n${ANSWER}\n\`\`\``), told.lastUserText);
    assert.equal(fs.readFileSync(path.join(repo, 'region.txt'), 'utf8'), 'eu-west-1\n');
  });
});
