import { MAX_SHARDS, shardText, type Shard } from '../sessionFormat/shards.js';
import { UsageError } from './usageError.js';

/**
 * `--shard I/N`, `--shard auto/N` or `--shard auto`: which share of the work this
 * machine runs. `auto` takes the index from the CI engine running the job, so that
 * one command line serves every machine: Kubernetes' Indexed Job says
 * `JOB_COMPLETION_INDEX` (from 0) but not how many there are, GitLab's `parallel:`
 * says `CI_NODE_INDEX` (from 1) and `CI_NODE_TOTAL`.
 */
export interface ShardChoice {
  shard: Shard;
  /** Where the index came from, as `--dry-run` says it. */
  source: string;
}

export function parseShardOption(text: string | undefined, env: NodeJS.ProcessEnv = process.env): ShardChoice | null {
  if (text === undefined) return null;
  const explicit = /^(\d+)\/(\d+)$/.exec(text);
  if (explicit) return { shard: checked(Number(explicit[1]), Number(explicit[2]), `--shard ${text}`), source: '--shard' };
  const automatic = /^auto(?:\/(\d+))?$/.exec(text);
  if (!automatic) throw new UsageError(`--shard "${text}" is not a shard: give I/N (such as 2/4: the second of four), auto/N or auto.`);
  const given = automatic[1] === undefined ? null : Number(automatic[1]);
  const kubernetesIndex = given === null ? null : wholeNumber(env, 'JOB_COMPLETION_INDEX');
  if (given !== null && kubernetesIndex !== null)
    return { shard: checked(kubernetesIndex + 1, given, `JOB_COMPLETION_INDEX=${kubernetesIndex} (from 0) of ${given}`), source: 'JOB_COMPLETION_INDEX' };
  const gitlabIndex = wholeNumber(env, 'CI_NODE_INDEX');
  const gitlabTotal = wholeNumber(env, 'CI_NODE_TOTAL');
  if (gitlabIndex !== null && (given ?? gitlabTotal) !== null) {
    if (given !== null && gitlabTotal !== null && given !== gitlabTotal)
      throw new UsageError(`--shard ${text} says ${given} shards, but CI_NODE_TOTAL says ${gitlabTotal}: give one of them.`);
    const total = (given ?? gitlabTotal)!;
    return { shard: checked(gitlabIndex, total, `CI_NODE_INDEX=${gitlabIndex} of ${total}`), source: 'CI_NODE_INDEX' };
  }
  throw new UsageError(
    given === null
      ? '--shard auto needs CI_NODE_INDEX and CI_NODE_TOTAL (GitLab parallel jobs); with JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) give the total: --shard auto/N.'
      : `--shard auto/${given} needs JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or CI_NODE_INDEX (GitLab) in the environment; neither is set. Give the index: --shard I/${given}.`,
  );
}

function checked(index: number, total: number, what: string): Shard {
  if (total < 1 || total > MAX_SHARDS) throw new UsageError(`${what}: the number of shards must be 1 to ${MAX_SHARDS}.`);
  if (index < 1 || index > total)
    throw new UsageError(`${what}: the shard must be 1 to ${total} (shards count from 1: ${shardText({ index: 1, total })} is the first).`);
  return { index, total };
}

/** The variable's whole number; null when it is not set (or empty). Set to anything else, it is a mistake said as such, not taken as unset. */
function wholeNumber(env: NodeJS.ProcessEnv, name: string): number | null {
  const value = env[name]?.trim();
  if (value === undefined || value === '') return null;
  if (!/^\d+$/.test(value)) throw new UsageError(`${name}=${JSON.stringify(env[name])} is not a whole number: --shard auto reads the shard from it.`);
  return Number(value);
}
