import { inShard } from '../sessionFormat/shards.js';
import type { EvalState, RunKey } from './evalRecord.js';

/** A run with its number in the eval (1, 2, … in `runsOf`'s order): what its folders are named by, and how shards deal the runs. */
export type NumberedRun = RunKey & { number: number };

/**
 * The runs of a suite, repetition by repetition so that an interrupted eval has every
 * config about as far. The order depends only on the plan (its repetitions, tasks and
 * configs as the suite lists them): every machine given the same suite at the same
 * commits numbers the runs alike.
 */
export function runsOf(started: EvalState['started']): RunKey[] {
  const keys: RunKey[] = [];
  for (let repetition = 1; repetition <= started.repetitions; repetition++)
    for (const task of started.tasks) for (const config of started.configs) keys.push({ task: task.name, config: config.name, repetition });
  return keys;
}

/** The runs this eval's record is for: all of them, or its shard's share (`--shard I/N`: every N-th run from the I-th). */
export function shareOf(started: EvalState['started']): NumberedRun[] {
  return runsOf(started)
    .map((key, index) => ({ ...key, number: index + 1 }))
    .filter((key) => inShard(key.number, started.shard));
}
