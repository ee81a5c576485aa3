import fs from 'node:fs';
import path from 'node:path';
import { scriptedCliSetup } from './scriptedAgent.js';
import { createRepo, tempDir, writeFile } from './testEnvironment.js';

/**
 * A tiny npm project whose own tests (`node --test`) are each task's acceptance. Its
 * actor gets `sum` wrong on its first attempt and right on its second (the attempt is
 * counted in an ignored file of its worktree, so runs side by side do not mix), and
 * `double` right at once. The critic is one scripted program judging by its model:
 * "lenient" says DONE to anything, "strict" runs the tests and names what fails.
 */
const ACTOR = `import fs from 'node:fs';
import path from 'node:path';
const agentDir = process.env.SCRIPTED_AGENT_DIR;
const call = process.env.SCRIPTED_AGENT_CALL;
if (fs.existsSync(path.join(agentDir, 'hold-at-' + call))) {
  // Held until the runner stops it: the test interrupts the eval here.
  fs.writeFileSync(path.join(agentDir, 'held-pid'), String(process.pid));
  fs.writeFileSync(path.join(agentDir, 'held'), call);
  setInterval(() => {}, 1000);
} else {
  const first = !fs.existsSync('.attempt');
  fs.writeFileSync('.attempt', 'tried');
  fs.writeFileSync('math.js', 'export const sum = (a, b) => ' + (first ? 'a - b' : 'a + b') + ';\\nexport const double = (a) => a * 2;\\n');
}
`;

const CRITIC = `import { spawnSync } from 'node:child_process';
const decide = (decision) => process.stdout.write('Reviewed.\\n<decision>' + JSON.stringify(decision) + '</decision>\\n');
const done = { type: 'done', summary: 'The functions are right.', confidence: 0.9 };
if (process.env.CODELOOPS_MODEL === 'lenient') decide(done);
else if (process.env.CODELOOPS_MODEL === 'doubting') decide({ type: 'continue', feedback: 'Not convinced yet.', remaining_issues: ['convince me'] });
else if (spawnSync(process.execPath, ['--test'], { stdio: 'ignore' }).status === 0) decide(done);
else decide({ type: 'continue', feedback: 'The tests fail: sum subtracts.', remaining_issues: ['sum'], findings: [{ file: 'math.js', line: 1, severity: 'error', message: 'sum subtracts' }] });
`;

export const TWO_CONFIGS = `
[[configs]]
name = "lenient"
critic_model = "lenient"

[[configs]]
name = "strict"
critic_model = "strict"
max_iterations = 4
`;

/**
 * The suite's tasks (`sum` alone, or both) and its configs (as TOML, `[[configs]]` tables),
 * on a machine of its own (an isolated home, its data folder and config); in a new
 * repository, or in `repo` (a clone, as another machine has).
 */
export function evalSetup(suiteOptions: { repetitions: number; sumOnly?: boolean; configs?: string; repo?: string }) {
  const setup = scriptedEvalAgents(ACTOR, CRITIC);
  const repo = suiteOptions.repo ?? tinyMathRepo();
  // The suite lives outside the repository: no agent can read the acceptance commands.
  const suiteFolder = tempDir('codeloops-suite-');
  writeFile(suiteFolder, 'tasks/double.md', 'Make double(x) return twice x.\n');
  writeFile(
    suiteFolder,
    'suite.toml',
    `name = "tiny-math"
repetitions = ${suiteOptions.repetitions}

[[tasks]]
name = "sum"
prompt = "Make sum(a, b) return a + b."
repository = ${JSON.stringify(path.relative(suiteFolder, repo))}
acceptance = "node --test test/sum.test.js"

${
  suiteOptions.sumOnly
    ? ''
    : `
[[tasks]]
name = "double"
prompt_file = "tasks/double.md"
repository = ${JSON.stringify(repo)}
ref = "main"
acceptance = "node --test test/double.test.js"
`
}${suiteOptions.configs ?? TWO_CONFIGS}`,
  );
  return { ...setup, repo, suite: path.join(suiteFolder, 'suite.toml') };
}

/** The tiny npm project: `sum` and `double` wrong, a test for each. */
export function tinyMathRepo(): string {
  return createRepo({
    gitignore: '.attempt\n',
    files: {
      'package.json': JSON.stringify({ name: 'tiny', type: 'module', scripts: { test: 'node --test' } }),
      'math.js': 'export const sum = () => 0;\nexport const double = () => 0;\n',
      'test/sum.test.js':
        "import test from 'node:test';\nimport assert from 'node:assert';\nimport { sum } from '../math.js';\ntest('sum', () => assert.equal(sum(2, 3), 5));\n",
      'test/double.test.js':
        "import test from 'node:test';\nimport assert from 'node:assert';\nimport { double } from '../math.js';\ntest('double', () => assert.equal(double(4), 8));\n",
    },
  });
}

/** Resolves once the file exists (the scripted actor writes \`held\` when it holds). */
export function fileAppears(file: string): Promise<void> {
  return new Promise((resolve) => {
    const watcher = fs.watch(path.dirname(file), () => check());
    const check = () => {
      if (!fs.existsSync(file)) return;
      watcher.close();
      resolve();
    };
    check();
  });
}

/** A machine of its own whose actor and critic are these two Node scripts (their source), run by the scripted agent. */
export function scriptedEvalAgents(actor: string, critic: string) {
  const tools = tempDir('codeloops-eval-agents-');
  writeFile(tools, 'actor.mjs', actor);
  writeFile(tools, 'critic.mjs', critic);
  return scriptedCliSetup({
    actor: [[{ shell: [process.execPath, path.join(tools, 'actor.mjs')] }]],
    critic: [[{ run: [process.execPath, path.join(tools, 'critic.mjs')] }]],
  });
}
