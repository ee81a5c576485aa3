/**
 * A check that prints 100 MB: the gate keeps its head and tail, and its peak memory
 * stays flat; against the same output buffered whole.
 */
import { execa } from 'execa';
import { runCheck } from '../../src/checks/runCheck.js';
import { assertEqual, peakMemoryDuring, runBenchmark, scratch, time } from './benchmark.js';

const BYTES = 100 * 1024 * 1024;

runBenchmark(async () => {
  const cwd = scratch('check-output');
  const flood = `head -c ${BYTES} /dev/zero | tr '\\0' 'x' | fold -w 100`;
  global.gc?.();
  const ours = await peakMemoryDuring(() => time(() => runCheck({ name: 'flood', run: flood, timeoutSecs: 600, required: true }, { cwd })));
  assertEqual(ours.result.result.outputChars >= BYTES, true, 'all the output was read');
  // The baseline: the output buffered whole.
  global.gc?.();
  const baseline = await peakMemoryDuring(() => time(() => execa('sh', ['-c', flood], { cwd, maxBuffer: 1 << 30 })));
  const ratio = ours.peakMb / baseline.peakMb;
  return {
    name: 'a check printing 100 MB (head and tail kept)',
    ours: `peak RSS ${ours.peakMb.toFixed(0)} MB, ${(ours.result.ms / 1000).toFixed(1)} s`,
    baseline: `buffering the output whole: peak RSS ${baseline.peakMb.toFixed(0)} MB`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the memory`,
    goal: 'peak < 150 MB',
    met: ours.peakMb < 150,
  };
});
