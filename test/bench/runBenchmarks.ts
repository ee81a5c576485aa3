/**
 * `npm run bench`: each benchmark is a file of its own beside this one (`<name>.bench.ts`,
 * built to out/test/bench/<name>.bench.js), run as its own process (clean memory
 * figures), which prints its result as a ratio against a baseline measured in the same run.
 *
 *   node out/test/bench/runBenchmarks.js            all benchmarks, as a table; exits with 1 while any goal is not met
 *   node out/test/bench/runBenchmarks.js list       one of them, its result as one JSON line (a name of BENCHMARKS)
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { BenchResult } from './benchmark.js';

/** Every benchmark, by its file's name, in the order of the table (the README's Performance section). */
const BENCHMARKS = [
  'list',
  'stats',
  'snapshot',
  'stream',
  'viewer',
  'api',
  'activation',
  'size',
  'decision',
  'processes',
  'checks',
  'checkOutput',
  'slowClient',
  'slowClients',
  'bigLine',
  'worktrees',
  'dependencyCopy',
  'bundleImport',
  'evalMerge',
  'evalOverhead',
  'evalJobs',
  'queueOverhead',
  'oracle',
  'baseline',
];

/** Runs a benchmark's own bundle (the flags as `npm run bench` gives them: gc for the memory figures, source maps for the stacks). */
function runBenchmarkFile(name: string, stdout: 'pipe' | 'inherit') {
  return spawnSync(process.execPath, ['--expose-gc', '--enable-source-maps', path.join(__dirname, `${name}.bench.js`)], {
    encoding: 'utf8',
    stdio: ['ignore', stdout, 'inherit'],
  });
}

function main(): void {
  // A benchmark file not in the list would never run: say so rather than leave it out of the table.
  const built = fs.readdirSync(__dirname).filter((file) => file.endsWith('.bench.js'));
  const unlisted = built.map((file) => file.slice(0, -'.bench.js'.length)).filter((name) => !BENCHMARKS.includes(name));
  if (unlisted.length > 0) throw new Error(`${unlisted.map((name) => `${name}.bench.ts`).join(', ')}: not in BENCHMARKS (test/bench/runBenchmarks.ts)`);
  const only = process.argv[2];
  if (only) {
    if (!BENCHMARKS.includes(only)) throw new Error(`unknown benchmark ${only}: one of ${BENCHMARKS.join(', ')}`);
    process.exitCode = runBenchmarkFile(only, 'inherit').status ?? 1;
    return;
  }
  const results: BenchResult[] = [];
  for (const name of BENCHMARKS) {
    process.stderr.write(`running ${name}…\n`);
    const child = runBenchmarkFile(name, 'pipe');
    if (child.status !== 0) {
      // One broken benchmark must not cost the figures of the others: it is reported, and the run fails at the end.
      results.push({ name, ours: 'failed (see above)', baseline: '', ratio: NaN, ratioText: '', goal: '', met: false });
      continue;
    }
    const result = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as BenchResult;
    process.stderr.write(`  ${result.ours} | ${result.baseline} | ${result.ratioText} | ${result.met ? 'met' : 'NOT MET'}\n`);
    results.push(result);
  }
  const lines = results.map(
    (result) => `| ${result.name} | ${result.ours} | ${result.baseline} | ${result.ratioText} | ${result.goal} | ${result.met ? 'met' : 'NOT MET'} |`,
  );
  process.stdout.write(['| benchmark | codeloops | baseline | ratio | goal | |', '|---|---|---|---|---|---|', ...lines].join('\n') + '\n');
  if (results.some((result) => !result.met)) process.exitCode = 1;
}

try {
  main();
} catch (error) {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
}
