/**
 * Start-up and Ctrl+C as a user sees them: `codeloops ui` until it serves, against
 * `codeloops --version`; and Ctrl+C until the runner exits, with an agent that ignores
 * SIGINT and SIGTERM (the runner escalates to SIGKILL and ends the session).
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SCRIPTED_AGENT } from '../support/scriptedAgent.js';
import { CODELOOPS_CLI, median, runBenchmark, scratch, timedProcess } from './benchmark.js';

/** A repository, and a config whose default agent prints "working" and then hangs, ignoring signals. */
function hangingAgent(home: string): { repo: string; agentDir: string } {
  const repo = path.join(home, 'repo');
  fs.rmSync(repo, { recursive: true, force: true });
  fs.mkdirSync(repo, { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd: repo });
  const agentDir = path.join(home, 'agent');
  fs.mkdirSync(agentDir, { recursive: true });
  fs.writeFileSync(path.join(agentDir, 'script.json'), JSON.stringify({ actor: [[{ print: 'working' }, { hang: true }]], critic: [[{ print: 'x' }]] }));
  fs.mkdirSync(path.join(home, 'config', 'codeloops'), { recursive: true });
  fs.writeFileSync(
    path.join(home, 'config', 'codeloops', 'config.toml'),
    `[defaults]\nagent = "command"\n[agents.command]\ncommand = [${JSON.stringify(process.execPath)}, ${JSON.stringify(SCRIPTED_AGENT())}]\nenv = { SCRIPTED_AGENT_DIR = ${JSON.stringify(agentDir)} }\n`,
  );
  return { repo, agentDir };
}

runBenchmark(async () => {
  const home = scratch('processes');
  const env = { ...process.env, XDG_DATA_HOME: path.join(home, 'data'), XDG_CONFIG_HOME: path.join(home, 'config'), NO_COLOR: '1' };
  // The baseline: the runner's smallest command, timed from a small process.
  const version = median([1, 2, 3, 4, 5].map(() => timedProcess([CODELOOPS_CLI, '--version'], env).ms));
  const uiStarts: number[] = [];
  for (let run = 0; run < 5; run++) {
    const started = performance.now();
    const child = spawn(process.execPath, [CODELOOPS_CLI, 'ui', '--no-open', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise<void>((resolve) => child.stdout.on('data', () => resolve()));
    uiStarts.push(performance.now() - started);
    child.kill('SIGINT');
    await new Promise((resolve) => child.on('exit', resolve));
  }
  const uiStart = median(uiStarts);
  const { repo, agentDir } = hangingAgent(home);
  const interrupts: number[] = [];
  for (let run = 0; run < 3; run++) {
    for (const name of fs.readdirSync(agentDir).filter((file) => /^actor(\.count|-\d+\.claim)$/.test(file))) fs.rmSync(path.join(agentDir, name));
    const child = spawn(process.execPath, [CODELOOPS_CLI, '-p', 'hang'], { cwd: repo, env, stdio: ['ignore', 'ignore', 'pipe'] });
    await new Promise<void>((resolve) => child.stderr.on('data', (chunk: Buffer) => chunk.toString().includes('working') && resolve()));
    const sent = performance.now();
    child.kill('SIGINT');
    await new Promise((resolve) => child.on('exit', resolve));
    interrupts.push(performance.now() - sent);
  }
  const interrupt = median(interrupts);
  return {
    name: 'start-up of `codeloops ui`, and Ctrl+C to exit with an agent that ignores signals',
    ours: `ui serving after ${uiStart.toFixed(0)} ms; Ctrl+C to exit ${interrupt.toFixed(0)} ms`,
    baseline: `\`codeloops --version\`: ${version.toFixed(0)} ms`,
    ratio: uiStart / version,
    ratioText: `ui ${(uiStart / version).toFixed(2)}× --version`,
    goal: 'ui ≤ 2× --version; exit ≤ 3 s',
    met: uiStart <= 2 * version && interrupt <= 3000,
  };
});
