/**
 * What every benchmark file (`*.bench.ts`) shares: the result it prints, the call that
 * runs it, and the tools that measure (a scratch folder, stopwatches, medians, peak memory).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface BenchResult {
  name: string;
  ours: string;
  baseline: string;
  ratio: number;
  /** What the ratio means, e.g. "7.8× faster". */
  ratioText: string;
  goal: string;
  met: boolean;
  notes?: string;
}

/**
 * A benchmark file's one top-level call: measures, and prints the result as one JSON
 * line, which runBenchmarks.ts reads. Each file is a process of its own, so that one
 * benchmark's memory never shows in another's figures.
 */
export function runBenchmark(measure: () => Promise<BenchResult>): void {
  measure().then(
    (result) => process.stdout.write(JSON.stringify(result) + '\n'),
    (error: unknown) => {
      process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
      process.exitCode = 1;
    },
  );
}

/** The runner's executable as a user starts it (the benchmarks run from the repository's root). */
export const CODELOOPS_CLI = path.join(process.cwd(), 'dist', 'cli.js');

/** A folder of the benchmark's own under the system temp folder, kept between runs (fixtures made once live there). */
export function scratch(name: string): string {
  const dir = path.join(os.tmpdir(), `codeloops-bench-${name}`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

export function assertEqual<T>(actual: T, expected: T, what: string): void {
  if (actual !== expected) throw new Error(`${what}: expected ${String(expected)}, got ${String(actual)}`);
}

export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

export async function time<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
}

/** Samples the process's memory while `work` runs; returns the peak resident set in MB. */
export async function peakMemoryDuring<T>(
  work: () => Promise<T>,
  read: () => number = () => process.memoryUsage().rss,
): Promise<{ result: T; peakMb: number }> {
  let peak = read();
  const timer = setInterval(() => (peak = Math.max(peak, read())), 10);
  try {
    const result = await work();
    peak = Math.max(peak, read());
    return { result, peakMb: peak / 1024 / 1024 };
  } finally {
    clearInterval(timer);
  }
}

/**
 * Starts the program from a small Node process, as a shell would, and returns its wall
 * time (start-up included) and stdout. Not spawned from here: forking copies the
 * forking process's page tables, and this benchmark's own heap (hundreds of MB after
 * making a fixture) added tens of milliseconds to every start it measured.
 */
const STOPWATCH_SCRIPT = `
const { spawnSync } = require('child_process');
const args = JSON.parse(process.argv[1]);
const started = performance.now();
const child = spawnSync(process.execPath, args, { maxBuffer: 1 << 30 });
const ms = performance.now() - started; // the output decoded after, not timed: a shell would not decode it either
if (child.status !== 0) { process.stderr.write(child.stderr); process.exit(1); }
process.stdout.write(JSON.stringify({ ms, stdout: child.stdout.toString('utf8') }));
`;

export function timedProcess(args: string[], env: NodeJS.ProcessEnv = process.env): { ms: number; stdout: string } {
  const stopwatch = spawnSync(process.execPath, ['-e', STOPWATCH_SCRIPT, JSON.stringify(args)], { env, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (stopwatch.status !== 0) throw new Error(`${args.join(' ')} failed: ${stopwatch.stderr}`);
  return JSON.parse(stopwatch.stdout) as { ms: number; stdout: string };
}
