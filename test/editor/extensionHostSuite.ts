/**
 * The mocha suite (test/vscode/suite) inside a real extension host: the VS Code
 * server from code-server with the smoke-test driver (test/support/codeServer.ts),
 * opened in Chromium, with this repository as the extension under development. test/run.mjs calls
 * `runExtensionHostSuite` and adds its counts to the run's.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { launchChromium, startCodeServer } from '../support/codeServer.js';
import { repoRoot, tempDir } from '../support/testEnvironment.js';

export interface SuiteResults {
  passed: number;
  failed: number;
  passes?: string[];
  failures: Array<{ title: string; error: string }>;
}

export interface SuiteWorkspace {
  scratch: string;
  /** The folder VS Code opens: a git repository. */
  workspace: string;
  /** Variables the extension host needs: isolated codeloops folders and the scripted agent. */
  env: Record<string, string>;
  resultsFile: string;
}

/** A workspace and a global config that make both roles the scripted agent (test/fixtures/agents). */
export function prepareSuiteWorkspace(): SuiteWorkspace {
  const scratch = tempDir('codeloops-exthost-');
  const workspace = path.join(scratch, 'workspace');
  const agentDir = path.join(scratch, 'agent');
  const configHome = path.join(scratch, 'config');
  const dataHome = path.join(scratch, 'data');
  for (const dir of [workspace, agentDir, path.join(configHome, 'codeloops'), dataHome]) fs.mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: workspace,
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    });
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(workspace, 'README.md'), '# extension host test\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  // Each test scripts the agents before its loop (extension.test.ts); until then they have nothing to do.
  fs.writeFileSync(path.join(agentDir, 'script.json'), JSON.stringify({ actor: [], critic: [] }));
  const agentCommand = [process.execPath, path.join(repoRoot(), 'test', 'fixtures', 'agents', 'scriptedAgent.mjs')];
  fs.writeFileSync(
    path.join(configHome, 'codeloops', 'config.toml'),
    `[defaults]\nagent = "command"\nmax_iterations = 5\n\n[agents.command]\ncommand = ${JSON.stringify(agentCommand)}\nenv = { SCRIPTED_AGENT_DIR = ${JSON.stringify(agentDir)} }\n`,
  );
  const resultsFile = path.join(scratch, 'results.json');
  return {
    scratch,
    workspace,
    resultsFile,
    env: { XDG_CONFIG_HOME: configHome, XDG_DATA_HOME: dataHome, SCRIPTED_AGENT_DIR: agentDir, CODELOOPS_TEST_RESULTS: resultsFile },
  };
}

export async function runExtensionHostSuite(outputDir: string): Promise<SuiteResults> {
  const root = repoRoot();
  const { scratch, workspace, resultsFile, env } = prepareSuiteWorkspace();
  fs.mkdirSync(outputDir, { recursive: true });
  for (const log of ['extension-host-suite.log', 'extension-host-server.log']) fs.rmSync(path.join(outputDir, log), { force: true });
  const server = await startCodeServer({
    extension: { developmentPath: root, testsPath: path.join(root, 'out', 'test', 'vscode', 'suite', 'index.js') },
    folder: workspace,
    env: { ...process.env, ...env },
    logFile: path.join(outputDir, 'extension-host-server.log'),
  });
  const browser = await launchChromium();
  try {
    // The workbench runs the suite as it opens and reports the end through the smoke-test
    // driver's hooks, which must exist before the page loads.
    const context = await browser.newContext();
    let exitCode: number | undefined;
    const exited = new Promise((resolve) => {
      void context.exposeFunction('codeAutomationExit', (code: number) => {
        exitCode = code;
        resolve(code);
      });
    });
    // The workbench's own chatter; kept for a post-mortem, not printed.
    await context.exposeFunction('codeAutomationLog', (...args: unknown[]) =>
      fs.appendFileSync(path.join(outputDir, 'extension-host-suite.log'), `${JSON.stringify(args)}\n`),
    );
    const page = await context.newPage();
    await page.goto(server.url);
    let giveUp: NodeJS.Timeout | undefined;
    const timeout = new Promise((resolve) => (giveUp = setTimeout(() => resolve('timeout'), 10 * 60_000)));
    const result = await Promise.race([exited, timeout]);
    clearTimeout(giveUp);
    await page.screenshot({ path: path.join(outputDir, 'extension-host-suite.png') }).catch(() => {});
    if (result === 'timeout') throw new Error('the extension host suite did not finish within 10 minutes');
    const results: SuiteResults = fs.existsSync(resultsFile)
      ? (JSON.parse(fs.readFileSync(resultsFile, 'utf8')) as SuiteResults)
      : { passed: 0, failed: 1, failures: [{ title: 'the suite', error: `exited with ${String(exitCode)} before reporting` }] };
    for (const title of results.passes ?? []) console.log(`  ✔ ${title}`);
    for (const failure of results.failures) console.log(`  ✗ ${failure.title}\n${failure.error.replace(/^/gm, '    ')}`);
    console.log(`extension host suite: ${results.passed} passed, ${results.failed} failed`);
    return results;
  } finally {
    await browser.close();
    await server.stop();
    if (!process.env.KEEP_TEST_DIRS) fs.rmSync(scratch, { recursive: true, force: true });
  }
}
