import { inShard, type Shard } from '../sessionFormat/shards.js';
import type { RunKey } from './evalRecord.js';

/** A run with its number in the eval (1, 2, … in `runsOf`'s order): what its folders are named by, and how shards deal the runs. */
export type NumberedRun = RunKey & { number: number };

/** What the runs are numbered from: an eval's plan as its record starts it (or as `--dry-run` reads the suite). */
export interface EvalPlan {
  repetitions: number;
  tasks: ReadonlyArray<{ name: string }>;
  configs: ReadonlyArray<{ name: string }>;
  /** `--shard I/N`: the share this record's process runs. */
  shard?: Shard | null;
}

/**
 * The runs of a suite, repetition by repetition so that an interrupted eval has every
 * config about as far. The order depends only on the plan (its repetitions, tasks and
 * configs as the suite lists them): every machine given the same suite at the same
 * commits numbers the runs alike.
 */
export function runsOf(started: EvalPlan): RunKey[] {
  const keys: RunKey[] = [];
  for (let repetition = 1; repetition <= started.repetitions; repetition++)
    for (const task of started.tasks) for (const config of started.configs) keys.push({ task: task.name, config: config.name, repetition });
  return keys;
}

/** The runs this eval's record is for: all of them, or its shard's share (`--shard I/N`: every N-th run from the I-th). */
export function shareOf(started: EvalPlan): NumberedRun[] {
  return runsOf(started)
    .map((key, index) => ({ ...key, number: index + 1 }))
    .filter((key) => inShard(key.number, started.shard));
}
