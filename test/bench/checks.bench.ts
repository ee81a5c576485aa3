/**
 * A check's own overhead in the verification gate: `true` run as a check, 30 times,
 * against the same command spawned bare and awaited, as any task runner would.
 */
import { spawn } from 'node:child_process';
import { runCheck } from '../../src/checks/runCheck.js';
import { assertEqual, median, runBenchmark, scratch, time } from './benchmark.js';

const RUNS = 30;

runBenchmark(async () => {
  const cwd = scratch('checks');
  const check = { name: 'noop', run: 'true', timeoutSecs: 60, required: true };
  const bare = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const child = spawn('sh', ['-c', 'true'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      child.on('error', reject);
      child.on('close', () => resolve());
    });
  // Taken in turns.
  const baselineTimes: number[] = [];
  const ourTimes: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    baselineTimes.push((await time(bare)).ms);
    const ours = await time(() => runCheck(check, { cwd }));
    assertEqual(ours.result.passed, true, 'the check passed');
    ourTimes.push(ours.ms);
  }
  const ours = median(ourTimes);
  const baseline = median(baselineTimes);
  const overhead = Math.max(0, ours - baseline);
  return {
    name: "a check's own overhead in the gate (`true`, median of 30)",
    ours: `${ours.toFixed(1)} ms a check`,
    baseline: `the command spawned bare ${baseline.toFixed(1)} ms`,
    ratio: ours / baseline,
    ratioText: `+${overhead.toFixed(1)} ms (${(ours / baseline).toFixed(2)}×)`,
    goal: 'overhead ≤ 50 ms',
    met: overhead <= 50,
  };
});
