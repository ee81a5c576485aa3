import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parseRunEvent, type RunEvent } from '../../src/sessionFormat/runEvents.js';
import { runCli, startCli } from '../support/cliProcess.js';
import type { ModelRequest, Responder, ScriptedReply } from '../support/modelApi/scripted.js';
import { scriptedApis, setUpRealAgents } from '../support/realAgentLoops.js';
import { isCriticRequest } from '../support/scriptedClaude.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo } from '../support/testEnvironment.js';

const lines = (count: number, change: Record<number, string> = {}) =>
  Array.from({ length: count }, (_, index) => change[index + 1] ?? `const line${index + 1} = ${index + 1};`).join('\n') + '\n';

/**
 * A critic that finds `var` on line 2 (a finding with file and line), then resolves it
 * once the actor says it addressed it; an actor that writes app.js with `var` on lines
 * 2 and 18, then fixes line 2 after review.
 */
function reviewModel(repo: string): Responder {
  return (request: ModelRequest): ScriptedReply => {
    if (request.toolNames.length === 0) return { text: 'Review task' };
    if (isCriticRequest(request)) {
      return request.allUserText.includes('Open review items')
        ? { text: 'The var is gone.\n<decision>{"type":"done","summary":"var replaced","confidence":0.9,"resolved":["F1.1"]}</decision>' }
        : {
            text:
              'Line 2 still uses var.\n<decision>' +
              JSON.stringify({
                type: 'continue',
                feedback: 'Use const on line 2.',
                findings: [{ file: 'app.js', line: 2, severity: 'error', message: 'var is not allowed: use const' }],
              }) +
              '</decision>',
          };
    }
    const second = request.allUserText.includes('Reviewer findings still open');
    if (request.hasToolResult) return { text: second ? 'Replaced var.\nAddressed: F1.1' : 'Edited app.js.' };
    return {
      toolCalls: [
        {
          name: 'Write',
          input: {
            file_path: path.join(repo, 'app.js'),
            content: second ? lines(20, { 2: 'const line2 = 2; // fixed' }) : lines(20, { 2: 'var line2 = 2;', 18: 'var line18 = 18;' }),
          },
        },
      ],
    };
  };
}

/**
 * Review with the real Claude Code CLI in both roles against a scripted Messages
 * API: the critic's findings, with file and line, and the user's rejected hunk with
 * its reason reach the next actor request, as the real CLI sends it to the model.
 */
describe('end to end: review with the real Claude Code CLI', () => {
  const startApi = scriptedApis();

  it('the next actor request carries the critic’s findings and the user’s rejection with its reason; the critic resolves them', async () => {
    const repo = createRepo({ files: { 'app.js': lines(20) } });
    const {
      env,
      apis: [api],
    } = await setUpRealAgents(startApi, repo, [{ agent: 'claude', model: reviewModel(repo) }]);

    const run = startCli(['-p', 'Tidy app.js', '--review', '--events', 'ndjson'], { cwd: repo, env, stdin: 'pipe' });
    const events: RunEvent[] = [];
    let buffered = '';
    let sessionId = '';
    const paused = new Promise<void>((resolve) =>
      run.child.stdout!.on('data', (chunk: Buffer) => {
        const parts = (buffered + chunk.toString('utf8')).split('\n');
        buffered = parts.pop()!;
        for (const line of parts) {
          const event = parseRunEvent(line);
          if (!event) continue;
          events.push(event);
          if (event.type === 'run_started') sessionId = event.session_id;
          if (event.type === 'review_paused') resolve();
        }
      }),
    );
    await paused;
    // While the loop waits: the user rejects the second hunk (line 18) from another terminal.
    const rejected = await runCli(['reject', sessionId, '--iteration', '1', '--hunk', '2', '--reason', 'line18 is exported: keep var there for now'], {
      cwd: repo,
      env,
    });
    assert.equal(rejected.code, 0, rejected.stderr);
    assert.equal(fs.readFileSync(path.join(repo, 'app.js'), 'utf8'), lines(20, { 2: 'var line2 = 2;' }));
    run.child.stdin!.write('{"type":"continue"}\n');
    // The second pause comes only if the loop goes on: it ends with DONE.
    const result = await run.done;
    assert.equal(result.code, 0, result.stderr);

    // What the real CLI sent the model for the second actor turn.
    const actorTurns = api!.requests.filter((request) => request.toolNames.length > 0 && !isCriticRequest(request) && !request.hasToolResult);
    const second = actorTurns.find((request) => request.lastUserText.includes('Reviewer findings still open'));
    assert.ok(second, `the second actor turn: ${actorTurns.map((request) => request.lastUserText.slice(0, 80)).join(' | ')}`);
    assert.match(second.lastUserText, /- F1\.1 in app\.js:2 \(error\): var is not allowed: use const/);
    assert.match(second.lastUserText, /- R1\.1: the user rejected this change of iteration 1 in app\.js because: line18 is exported: keep var there for now\./);
    assert.match(second.lastUserText, /-const line18 = 18;\n\+var line18 = 18;/, 'the rejected hunk itself');
    assert.ok(second.lastUserText.indexOf('## From the user') < second.lastUserText.indexOf('## Reviewer findings'), 'the user first');

    // The critic heard the actor's claim and resolved the finding.
    const criticTurns = api!.requests.filter(isCriticRequest);
    assert.match(
      criticTurns.at(-1)!.allUserText,
      /F1\.1 \(your finding, error\) in app\.js:2: var is not allowed: use const \[the actor says it addressed this\]/,
    );
    const decisions = events.filter((event) => event.type === 'critic_decision');
    assert.deepEqual(decisions.at(-1)?.type === 'critic_decision' ? decisions.at(-1)!.resolved : undefined, ['F1.1']);
    const summary = events.find((event) => event.type === 'run_finished');
    assert.equal(summary?.type === 'run_finished' ? summary.status : undefined, 'success');
    const { iterations } = assertValidSessionFile(summary?.type === 'run_finished' ? summary.session_file : '');
    assert.equal((iterations[0] as { findings?: { id: string; anchored: boolean }[] }).findings?.[0]?.anchored, true);
    assert.equal(fs.readFileSync(path.join(repo, 'app.js'), 'utf8'), lines(20, { 2: 'const line2 = 2; // fixed' }));
  });
});
