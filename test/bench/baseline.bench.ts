/**
 * The baseline beside the first actor run: an actor's turn is mostly waiting for its
 * model's API, so the start's tests (toolz's 180 pytest tests, fetched from
 * Debian) run on the free core meanwhile. The first iteration's wall time with the
 * baseline taken beside it, against the same turn alone; the turn is modelled as a
 * process that waits three times as long as the baseline takes by itself.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { openRepository } from '../../src/git/repository.js';
import { TestOracle } from '../../src/loop/testOracle.js';
import { median, runBenchmark, scratch, time } from './benchmark.js';
import { PROJECTS, projectRepository } from './oracleProjects.js';

const RUNS = 3;

/** An agent's turn waiting on its API: a process that sleeps. */
const actorTurn = (secs: number) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn('sleep', [secs.toFixed(2)], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', () => resolve());
  });

runBenchmark(async () => {
  const root = scratch('baseline');
  const project = PROJECTS.find((each) => each.source.name === 'toolz')!;
  const { repo, start } = await projectRepository(project, root);
  const repository = await openRepository(repo);
  let made = 0;
  const baselineBeside = async (turn: Promise<void> | null) => {
    const oracle = new TestOracle({
      repository,
      workingDir: repo,
      sessionId: `bench-baseline-${made++}`,
      startCommit: start,
      checks: [project.check],
      isolation: { directory: path.join(root, 'worktrees'), worktree: { copy: [], setup: null, setupTimeoutSecs: 60 } },
      userProtected: [],
    });
    try {
      const [baseline] = await Promise.all([oracle.baseline(new AbortController().signal), turn]);
      if (baseline.unavailable !== null) throw new Error(`no baseline: ${baseline.unavailable}`);
    } finally {
      await oracle.dispose();
    }
  };
  const alone = median(await sequence(RUNS, async () => (await time(() => baselineBeside(null))).ms));
  const turnSecs = (3 * alone) / 1000;
  const turnTimes: number[] = [];
  const besideTimes: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    turnTimes.push((await time(() => actorTurn(turnSecs))).ms);
    besideTimes.push((await time(() => baselineBeside(actorTurn(turnSecs)))).ms);
  }
  const turn = median(turnTimes);
  const beside = median(besideTimes);
  return {
    name: "the start's tests' baseline beside the first actor run (toolz, pytest; median of 3)",
    ours: `the turn with the baseline beside it ${(beside / 1000).toFixed(2)} s (the baseline alone ${(alone / 1000).toFixed(2)} s)`,
    baseline: `the turn alone ${(turn / 1000).toFixed(2)} s`,
    ratio: beside / turn,
    ratioText: `+${Math.max(0, (beside - turn) / 1000).toFixed(2)} s (${(beside / turn).toFixed(2)}×)`,
    goal: '≤ 1.1× the turn alone (≈ 0 added with a free core)',
    met: beside / turn <= 1.1,
  };
});

async function sequence(count: number, work: () => Promise<number>): Promise<number[]> {
  const results: number[] = [];
  for (let i = 0; i < count; i++) results.push(await work());
  return results;
}
