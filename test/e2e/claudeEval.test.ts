import assert from 'node:assert/strict';
import path from 'node:path';
import { evalResultsSchema } from '../../src/sessionFormat/evalRecords.js';
import { sessionStartLineSchema } from '../../src/sessionFormat/sessionLines.js';
import { runCli } from '../support/cliProcess.js';
import type { ModelRequest, ScriptedReply } from '../support/modelApi/scripted.js';
import { REAL_AGENTS, isActorTurn, scriptedApis, setUpRealAgents } from '../support/realAgentLoops.js';
import { isCriticRequest } from '../support/scriptedClaude.js';
import { readJsonLines } from '../support/scriptedLoop.js';
import { createRepo, tempDir, writeFile } from '../support/testEnvironment.js';

const SUM_TASK = 'Make sum(a, b) return a + b.';
const DOUBLE_TASK = 'Make double(x) return twice x.';

/**
 * A model that gets `sum` wrong (it subtracts) and `double` right, each with one shell
 * command in its worktree, and a critic that approves whatever it is shown: with the
 * hidden acceptance, the eval must count the first a false DONE.
 */
function hastyModel(request: ModelRequest): ScriptedReply {
  if (request.toolNames.length === 0) return { text: 'Math task' }; // side requests (titles)
  if (isCriticRequest(request)) return { text: 'Looks right.\n<decision>{"type":"done","summary":"The function is written.","confidence":0.8}</decision>' };
  if (request.hasToolResult) return { text: 'Done.' };
  const body = request.allUserText.includes(SUM_TASK) ? 'export const sum = (a, b) => a - b;' : 'export const double = (x) => x * 2;';
  const file = request.allUserText.includes(SUM_TASK) ? 'sum.js' : 'double.js';
  return { toolCalls: [{ name: 'Bash', input: { command: `printf '%s\\n' '${body}' > ${file}`, description: 'write the function' } }] };
}

describe('end to end: codeloops eval with the real Claude Code CLI as a config', () => {
  const startApi = scriptedApis();

  it('a critic that approves a broken change is counted a false DONE; the right change is accepted; no request shows an acceptance command', async () => {
    const test = (name: string, expression: string) =>
      `import test from 'node:test';\nimport assert from 'node:assert';\nimport { ${name} } from '../${name}.js';\ntest('${name}', () => assert.ok(${expression}));\n`;
    const repo = createRepo({
      files: {
        'package.json': JSON.stringify({ name: 'tiny', type: 'module' }),
        'sum.js': 'export const sum = () => 0;\n',
        'double.js': 'export const double = () => 0;\n',
        'test/sum.test.js': test('sum', 'sum(2, 3) === 5'),
        'test/double.test.js': test('double', 'double(4) === 8'),
      },
    });
    const setup = await setUpRealAgents(startApi, repo, [{ agent: 'claude', model: hastyModel }]);
    const suiteFolder = tempDir('codeloops-suite-');
    writeFile(
      suiteFolder,
      'suite.toml',
      `name = "claude-math"

[[tasks]]
name = "sum"
prompt = ${JSON.stringify(SUM_TASK)}
repository = ${JSON.stringify(repo)}
acceptance = "node --test test/sum.test.js"

[[tasks]]
name = "double"
prompt = ${JSON.stringify(DOUBLE_TASK)}
repository = ${JSON.stringify(repo)}
acceptance = "node --test test/double.test.js"

[[configs]]
name = "claude"
actor = "claude"
critic = "claude"
max_iterations = 2
`,
    );
    const result = await runCli(['eval', path.join(suiteFolder, 'suite.toml'), '--json'], { cwd: repo, env: setup.env });
    assert.equal(result.code, 0, result.stderr);
    const results = evalResultsSchema.parse(JSON.parse(result.stdout));
    assert.deepEqual(
      results.runs.map((run) => `${run.task}/${run.config}: ${run.outcome} in ${run.iterations}`),
      ['sum/claude: false_done in 1', 'double/claude: accepted in 1'],
    );
    assert.deepEqual(
      results.configs.map((config) => [config.name, config.runs, config.accepted_rate, config.false_done_rate]),
      [['claude', 2, 0.5, 0.5]],
    );
    for (const run of results.runs) {
      const start = sessionStartLineSchema.parse(readJsonLines(path.join(setup.home.sessionsDir, `${run.session_id}.jsonl`))[0]);
      assert.equal(start.actor_agent, REAL_AGENTS.claude.name);
      assert.equal(start.critic_agent, REAL_AGENTS.claude.name);
      assert.deepEqual(start.eval, { id: results.eval_id, task: run.task, config: 'claude', repetition: 1 });
    }
    // Both roles really ran through the CLI: two actor turns opened a task each, two critic turns judged.
    const [api] = setup.apis;
    assert.equal(api!.requests.filter((request) => isActorTurn(request) && !request.hasToolResult).length, 2);
    assert.equal(api!.requests.filter(isCriticRequest).length, 2);
    for (const request of api!.requests) assert.doesNotMatch(JSON.stringify(request.body), /node --test|test\/sum\.test\.js/);
  });
});
