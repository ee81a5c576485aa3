import * as z from './zod.js';

/**
 * A share of an eval's runs or a queue's tasks (`--shard I/N`): the work is numbered in
 * an order that depends only on what the eval or queue is (its plan, its tasks), and
 * dealt round-robin, so that N machines given 1/N … N/N run every piece once and
 * agree on who runs which without talking to each other. Indexes count from 1, as a
 * user and GitLab's `CI_NODE_INDEX` do.
 */
export const shardSchema = z.object({
  index: z.int().check(z.positive()),
  total: z.int().check(z.positive()),
});
export type Shard = z.infer<typeof shardSchema>;

/** The most shards a piece of work is split into: more is a typo. */
export const MAX_SHARDS = 1000;

/** Whether the piece numbered `position` (1, 2, … in the work's own order) is this shard's. */
export function inShard(position: number, shard: Shard | null | undefined): boolean {
  return !shard || (position - 1) % shard.total === shard.index - 1;
}

export function shardText(shard: Shard): string {
  return `${shard.index}/${shard.total}`;
}
