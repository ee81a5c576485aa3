/**
 * The eval's own overhead: 20 runs of a trivial scripted agent by `codeloops eval
 * --jobs 1` (a worktree per run, the loop, the acceptance in a clean worktree, the
 * record), against the same 20 loops run one after another by `codeloops run`, each
 * in a fresh worktree the benchmark makes.
 */
import { runBenchmark } from './benchmark.js';
import { evalBench, timeEval, timeRunsInWorktrees } from './evalFixture.js';

const RUNS = 20;

runBenchmark(async () => {
  const bench = evalBench('evalOverhead', RUNS);
  // Each measured twice, alternating, the faster kept: other work on a shared machine only ever adds time.
  const ours: number[] = [];
  const baseline: number[] = [];
  for (let round = 0; round < 2; round++) {
    ours.push(timeEval(bench, 1).ms);
    baseline.push(timeRunsInWorktrees(bench, RUNS));
  }
  const [best, bestBaseline] = [Math.min(...ours), Math.min(...baseline)];
  const ratio = best / bestBaseline;
  return {
    name: `\`codeloops eval\` of ${RUNS} runs of a trivial scripted agent, --jobs 1`,
    ours: `${(best / 1000).toFixed(1)} s (${(best / RUNS).toFixed(0)} ms a run, its acceptance included)`,
    baseline: `the same ${RUNS} loops by \`codeloops run\`, each in a fresh worktree: ${(bestBaseline / 1000).toFixed(1)} s`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the time`,
    goal: '≤ 1.3×',
    met: ratio <= 1.3,
  };
});
