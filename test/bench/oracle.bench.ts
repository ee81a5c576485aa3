/**
 * The oracle's cost at a DONE, on two real projects (bytes with mocha, toolz with
 * pytest): the start's tests composed onto the final code, the worktree moved there and
 * the check run in a clean environment, against one run of the same check in the
 * repository. Median of 5 each, in turns.
 */
import path from 'node:path';
import { runCheck } from '../../src/checks/runCheck.js';
import { openRepository } from '../../src/git/repository.js';
import { TestOracle } from '../../src/loop/testOracle.js';
import { median, runBenchmark, scratch, time } from './benchmark.js';
import { mochaOnPath, PROJECTS, projectRepository } from './oracleProjects.js';

const RUNS = 5;

runBenchmark(async () => {
  mochaOnPath();
  const root = scratch('oracle');
  const figures: { name: string; oracleMs: number; checkMs: number }[] = [];
  for (const project of PROJECTS) {
    const { repo, start, final } = await projectRepository(project, root);
    const oracle = new TestOracle({
      repository: await openRepository(repo),
      workingDir: repo,
      sessionId: `bench-${project.source.name}`,
      startCommit: start,
      checks: [project.check],
      isolation: { directory: path.join(root, 'worktrees'), worktree: { copy: [], setup: null, setupTimeoutSecs: 60 } },
      userProtected: [],
    });
    const signal = new AbortController().signal;
    try {
      const baseline = await oracle.baseline(signal);
      if (baseline.unavailable !== null) throw new Error(`${project.source.name}: no baseline: ${baseline.unavailable}`);
      const oracleTimes: number[] = [];
      const checkTimes: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        const plain = await time(() => runCheck(project.check, { cwd: repo }));
        if (!plain.result.passed) throw new Error(`${project.source.name}: the check failed in the repository:\n${plain.result.output}`);
        checkTimes.push(plain.ms);
        // The oracle at each DONE: back to the start tree between runs, so that every run composes and moves.
        const judged = await time(() => oracle.judge(run % 2 === 0 ? final : start, signal));
        if (!judged.result || judged.result.findings.length > 0)
          throw new Error(`${project.source.name}: the oracle found ${JSON.stringify(judged.result?.findings)}`);
        oracleTimes.push(judged.ms);
      }
      figures.push({ name: project.source.name, oracleMs: median(oracleTimes), checkMs: median(checkTimes) });
    } finally {
      await oracle.dispose();
    }
  }
  const worst = Math.max(...figures.map((figure) => figure.oracleMs / figure.checkMs));
  const text = (pick: (figure: (typeof figures)[number]) => number) =>
    figures.map((figure) => `${figure.name} ${(pick(figure) / 1000).toFixed(2)} s`).join(', ');
  return {
    name: "the oracle at a DONE: the start's tests on the final code in a clean worktree (median of 5)",
    ours: text((figure) => figure.oracleMs),
    baseline: `one run of the check: ${text((figure) => figure.checkMs)}`,
    ratio: worst,
    ratioText: figures.map((figure) => `${figure.name} ${(figure.oracleMs / figure.checkMs).toFixed(2)}×`).join(', '),
    goal: '≤ 1.5× one run of the check',
    met: worst <= 1.5,
  };
});
