/**
 * Reading the critic's decision block at the end of a 5 MB answer, against the one
 * scan any reader needs to find the block's tags.
 */
import { parseCriticDecision } from '../../src/critic/criticDecision.js';
import { assertEqual, median, runBenchmark } from './benchmark.js';

function timeSync(work: () => unknown): number {
  const started = performance.now();
  work();
  return performance.now() - started;
}

runBenchmark(async () => {
  const answer = 'The critic thinks aloud. '.repeat(200_000) + '<decision>{"type":"done","summary":"ok","confidence":1}</decision>';
  const oursMs = median([1, 2, 3, 4, 5].map(() => timeSync(() => assertEqual(parseCriticDecision(answer)?.decision.kind, 'DONE', 'read'))));
  // The baseline: one regular-expression scan for the block.
  const scanMs = median([1, 2, 3, 4, 5].map(() => timeSync(() => [...answer.matchAll(/<decision>([\s\S]*?)<\/decision>/gi)].at(-1))));
  const ratio = oursMs / scanMs;
  return {
    name: `the critic's decision at the end of a ${(answer.length / 1_000_000).toFixed(0)} MB answer`,
    ours: `${oursMs.toFixed(1)} ms`,
    baseline: `one regular-expression scan for the block: ${scanMs.toFixed(1)} ms`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the time`,
    goal: '≤ 3× one scan',
    met: ratio <= 3,
  };
});
