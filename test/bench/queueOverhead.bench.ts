/**
 * The queue's own overhead: 20 tasks of a trivial scripted agent by `codeloops queue
 * run` (a branch and a worktree per task, the loop, the commit on its branch, the
 * queue's file rewritten at each step), against the same 20 loops run one after another
 * by `codeloops run`, each in a fresh worktree the benchmark makes.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CODELOOPS_CLI, runBenchmark } from './benchmark.js';
import { evalBench, timeRunsInWorktrees, type EvalBench } from './evalFixture.js';

const TASKS = 20;

/** A fresh queue of the tasks (the branches of an earlier round deleted), then `queue run` timed as a whole process. */
function timeQueue(bench: EvalBench): number {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: bench.repo, env: bench.env, encoding: 'utf8' });
  for (const branch of git('for-each-ref', '--format=%(refname:short)', 'refs/heads/codeloops/').split('\n').filter(Boolean)) git('branch', '-D', '-q', branch);
  fs.rmSync(path.join(bench.env.XDG_DATA_HOME!, 'codeloops', 'queues'), { recursive: true, force: true });
  const checklist = path.join(bench.root, 'tasks.md');
  fs.writeFileSync(checklist, Array.from({ length: TASKS }, (_, index) => `- [ ] Write a note, number ${index + 1}.\n`).join(''));
  execFileSync(process.execPath, [CODELOOPS_CLI, 'queue', 'add', '--file', checklist], { cwd: bench.repo, env: bench.env, stdio: 'ignore' });
  const started = performance.now();
  const child = spawnSync(process.execPath, [CODELOOPS_CLI, 'queue', 'run'], { cwd: bench.repo, env: bench.env, encoding: 'utf8' });
  const ms = performance.now() - started;
  if (child.status !== 0) throw new Error(`codeloops queue run failed (exit ${child.status}): ${child.stderr}`);
  const succeeded = (child.stderr.match(/^Task \d+: success$/gm) ?? []).length;
  if (succeeded !== TASKS) throw new Error(`${succeeded} of ${TASKS} tasks succeeded: ${child.stderr}`);
  return ms;
}

runBenchmark(async () => {
  const bench = evalBench('queueOverhead', 1);
  // Each measured twice, alternating, the faster kept: other work on a shared machine only ever adds time.
  const ours: number[] = [];
  const baseline: number[] = [];
  for (let round = 0; round < 2; round++) {
    ours.push(timeQueue(bench));
    baseline.push(timeRunsInWorktrees(bench, TASKS));
  }
  const [best, bestBaseline] = [Math.min(...ours), Math.min(...baseline)];
  const ratio = best / bestBaseline;
  return {
    name: `\`codeloops queue run\` of ${TASKS} tasks of a trivial scripted agent (a branch, a worktree, a loop and a commit each)`,
    ours: `${(best / 1000).toFixed(1)} s (${(best / TASKS).toFixed(0)} ms a task)`,
    baseline: `the same ${TASKS} loops by \`codeloops run\`, each in a fresh worktree: ${(bestBaseline / 1000).toFixed(1)} s`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the time`,
    goal: '≤ 1.3×',
    met: ratio <= 1.3,
  };
});
