/**
 * What `--jobs` buys when the agents take their time (each sleeps 1 s per turn, as a
 * model's answer keeps a real agent waiting): an eval at `--jobs 2` against the same
 * eval at `--jobs 1`.
 */
import { runBenchmark } from './benchmark.js';
import { evalBench, timeEval } from './evalFixture.js';

const RUNS = 6;

runBenchmark(async () => {
  const bench = evalBench('evalJobs', RUNS, 1000);
  const one = timeEval(bench, 1).ms;
  const two = timeEval(bench, 2).ms;
  const ratio = two / one;
  return {
    name: `\`codeloops eval\` of ${RUNS} runs whose agents sleep 1 s a turn, --jobs 2`,
    ours: `--jobs 2: ${(two / 1000).toFixed(1)} s`,
    baseline: `--jobs 1: ${(one / 1000).toFixed(1)} s`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the time`,
    goal: '≤ 0.7×',
    met: ratio <= 0.7,
  };
});
