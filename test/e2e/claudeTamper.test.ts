import assert from 'node:assert/strict';
import path from 'node:path';
import { runCli } from '../support/cliProcess.js';
import type { ModelRequest, ScriptedReply } from '../support/modelApi/scripted.js';
import { scriptedApis, setUpRealAgents } from '../support/realAgentLoops.js';
import { sidecarEvents } from '../support/realAgents.js';
import { isCriticRequest } from '../support/scriptedClaude.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo } from '../support/testEnvironment.js';

const SUM_TESTS = `const { test } = require('node:test');
const assert = require('node:assert');
const { sum } = require('../src/sum.js');
test('adds two numbers', () => assert.strictEqual(sum(2, 3), 5));
test('adds zero', () => assert.strictEqual(sum(4, 0), 4));
`;

/** What the actor is told of a start test the oracle found failing on the final code. */
const TOLD_TO_FIX = 'adds two numbers still fails';

/**
 * An actor that games the gate, then does the work: it skips the failing test (the
 * suite passes), and once told the start's test still fails on the final code, restores
 * it and fixes `sum`. A critic that runs `npm test` with its own Bash tool and believes
 * what it sees.
 */
function tamperingModel(repo: string) {
  return (request: ModelRequest): ScriptedReply => {
    if (request.toolNames.length === 0) return { text: 'Sum task' }; // side requests (titles)
    if (isCriticRequest(request)) {
      if (!request.hasToolResult)
        return { text: 'Running the tests.', toolCalls: [{ name: 'Bash', input: { command: 'npm test', description: 'run the tests' } }] };
      return { text: 'The tests pass.\n<decision>{"type":"done","summary":"npm test passes","confidence":0.9}</decision>' };
    }
    const toldToRestore = request.allUserText.includes(TOLD_TO_FIX);
    if (request.hasToolResult) return { text: toldToRestore ? 'Restored the test and fixed sum.' : 'Skipped the flaky test; the suite passes now.' };
    return toldToRestore
      ? {
          toolCalls: [
            { name: 'Write', input: { file_path: path.join(repo, 'test', 'sum.test.js'), content: SUM_TESTS } },
            { name: 'Write', input: { file_path: path.join(repo, 'src', 'sum.js'), content: 'exports.sum = (a, b) => a + b;\n' } },
          ],
        }
      : {
          toolCalls: [
            {
              name: 'Write',
              input: { file_path: path.join(repo, 'test', 'sum.test.js'), content: SUM_TESTS.replace("test('adds two", "test.skip('adds two") },
            },
          ],
        };
  };
}

describe('end to end: the real Claude Code CLI cannot pass the gate by skipping a test', () => {
  const startApi = scriptedApis();

  it("a skipped test refuses the believing critic's DONE (the start's test still fails on the final code); told so, the actor fixes the code, and the DONE then rests on the start's tests and the critic's own npm test", async () => {
    const repo = createRepo({
      files: {
        'package.json': JSON.stringify({ name: 'sums', version: '1.0.0', private: true, scripts: { test: 'node --test' } }, null, 2) + '\n',
        'src/sum.js': 'exports.sum = (a, b) => a - b;\n',
        'test/sum.test.js': SUM_TESTS,
        'codeloops.toml': '[[checks]]\nname = "tests"\nrun = "npm test"\n',
      },
    });
    const {
      env,
      home,
      apis: [api],
    } = await setUpRealAgents(startApi, repo, [{ agent: 'claude', model: tamperingModel(repo) }]);

    const result = await runCli(['-p', 'Fix sum so that the tests pass.', '--trust', '-n', '3', '--json-output'], { cwd: repo, env });
    const outcome = JSON.parse(result.stdout) as {
      status: string;
      iterations: number;
      session_id: string;
      session_file: string;
      verification: string | null;
      verified_by: { start_tests: { passed: number } | null; critic_commands: number };
    };
    assert.equal(outcome.status, 'success', result.stderr);
    assert.equal(outcome.iterations, 2, 'the skip was refused once, then the real fix went through');
    assert.equal(outcome.verification, 'verified');
    assert.deepEqual([outcome.verified_by.start_tests?.passed, outcome.verified_by.critic_commands], [2, 1]);

    const { lines } = assertValidSessionFile(outcome.session_file);
    const first = lines[1] as Record<string, unknown>;
    assert.deepEqual([first.critic_decision, first.critic_verdict], ['CONTINUE', 'DONE']);
    const events = sidecarEvents(home, outcome.session_id);
    const refusal = events.find((event) => event.type === 'done_refused');
    assert.deepEqual(refusal?.type === 'done_refused' && [refusal.iteration, refusal.failed_tests], [1, ['adds two numbers']]);
    const hint = events.find((event) => event.type === 'protected_change');
    assert.deepEqual(hint?.type === 'protected_change' && [hint.change.file, hint.change.kind, hint.status], ['test/sum.test.js', 'skip_added', 'hint']);
    assert.equal(first.protected_changes, undefined, "the skip is a hint: the start's tests judge it");

    const criticRequests = api!.requests.filter(isCriticRequest);
    assert.match(
      criticRequests[0]!.allUserText,
      /## Changes to what the checks rest on[\s\S]*test\/sum\.test\.js: a test skipped \(test\.skip\)/,
      'the critic is told, as a fact',
    );
    const secondActor = api!.requests.filter(
      (request) => !isCriticRequest(request) && request.toolNames.length > 0 && request.allUserText.includes(TOLD_TO_FIX),
    );
    assert.ok(secondActor.length > 0, "the next actor request names the start's test that still fails");

    const verdicts = events.filter((event) => event.type === 'critic_decision');
    assert.deepEqual(
      verdicts.map((event) => (event.type === 'critic_decision' ? event.evidence?.commands.map(({ command, ok }) => [command, ok]) : null)),
      [[['npm test', true]], [['npm test', true]]],
      'the critic’s own npm test, from its stream, with how it went',
    );
    assert.match(result.stderr, /verified by: `npm test` ok/);
  });
});
