/**
 * What the eval benchmarks share: a small repository, the scripted agent in both roles
 * (its script the same on every call), a suite of one task and one config repeated,
 * and the two ways to run its loops: `codeloops eval` and, one after another, plain
 * `codeloops run` each in a fresh worktree the benchmark makes.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { evalResultsSchema, type EvalResults } from '../../src/sessionFormat/evalRecords.js';
import { SCRIPTED_AGENT, done, type AgentScript } from '../support/scriptedAgent.js';
import { CODELOOPS_CLI, scratch } from './benchmark.js';
import { gitEnv } from './fixtures.js';

export interface EvalBench {
  root: string;
  repo: string;
  suite: string;
  env: NodeJS.ProcessEnv;
}

const PROMPT = 'Write a note.';

/** An actor that writes a note (after `sleepMs`), a critic that says DONE (after `sleepMs`). */
export function evalBench(name: string, repetitions: number, sleepMs = 0): EvalBench {
  const root = scratch(name);
  // Every run starts afresh: sessions, worktrees and evals of earlier runs would only weigh on this one.
  fs.rmSync(root, { recursive: true, force: true });
  const repo = path.join(root, 'repo');
  fs.mkdirSync(repo, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: gitEnv, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(repo, 'README.md'), '# project\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  const agentDir = path.join(root, 'agent');
  fs.mkdirSync(agentDir, { recursive: true });
  const sleep = sleepMs > 0 ? [{ sleep: sleepMs }] : [];
  const script: AgentScript = { actor: [[...sleep, { write: { path: 'note.txt', content: 'a note\n' } }]], critic: [[...sleep, done()]] };
  fs.writeFileSync(path.join(agentDir, 'script.json'), JSON.stringify(script));
  const configHome = path.join(root, 'config');
  fs.mkdirSync(path.join(configHome, 'codeloops'), { recursive: true });
  fs.writeFileSync(
    path.join(configHome, 'codeloops', 'config.toml'),
    `[defaults]\nagent = "command"\n[agents.command]\ncommand = [${JSON.stringify(process.execPath)}, ${JSON.stringify(SCRIPTED_AGENT())}]\nenv = { SCRIPTED_AGENT_DIR = ${JSON.stringify(agentDir)} }\n`,
  );
  // The suite beside the repository, as a user keeps it: outside the tree the agents read.
  const suite = path.join(root, 'suite.toml');
  fs.writeFileSync(
    suite,
    `name = "bench"\nrepetitions = ${repetitions}\n\n[[tasks]]\nname = "note"\nprompt = ${JSON.stringify(PROMPT)}\nrepository = "repo"\nacceptance = "test -f note.txt"\n\n[[configs]]\nname = "scripted"\n`,
  );
  const env = { ...gitEnv, XDG_DATA_HOME: path.join(root, 'data'), XDG_CONFIG_HOME: configHome, NO_COLOR: '1' };
  return { root, repo, suite, env };
}

/** `codeloops eval` as a user runs it, to its JSON results; every run must have been accepted. */
export function timeEval(bench: EvalBench, jobs: number): { ms: number; results: EvalResults } {
  const started = performance.now();
  const child = spawnSync(process.execPath, [CODELOOPS_CLI, 'eval', bench.suite, '--jobs', String(jobs), '--json'], { env: bench.env, encoding: 'utf8' });
  const ms = performance.now() - started;
  if (child.status !== 0) throw new Error(`codeloops eval failed (exit ${child.status}): ${child.stderr}`);
  const results = evalResultsSchema.parse(JSON.parse(child.stdout));
  const notAccepted = results.runs.filter((run) => run.outcome !== 'accepted');
  if (notAccepted.length > 0) throw new Error(`${notAccepted.length} runs not accepted: ${JSON.stringify(notAccepted[0])}`);
  return { ms, results };
}

/** The same loops without eval: for each, a fresh worktree of HEAD, `codeloops run` in it, the worktree removed. */
export function timeRunsInWorktrees(bench: EvalBench, runs: number): number {
  const folders = path.join(bench.root, 'baseline-worktrees');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: bench.repo, env: bench.env, stdio: 'ignore' });
  const started = performance.now();
  for (let run = 1; run <= runs; run++) {
    const worktree = path.join(folders, String(run));
    git('worktree', 'add', '--detach', '--quiet', worktree, 'HEAD');
    const child = spawnSync(process.execPath, [CODELOOPS_CLI, '-p', PROMPT, '--json-output'], { cwd: worktree, env: bench.env, encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`codeloops run failed (exit ${child.status}): ${child.stderr}`);
    git('worktree', 'remove', '--force', worktree);
  }
  return performance.now() - started;
}
