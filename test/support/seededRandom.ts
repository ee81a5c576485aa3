/** The same "random" numbers on every run (mulberry32): made-up sessions that look alike from one run to the next. */
export function seededRandom(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One of the values, each as likely as its weight. */
export function pick<T>(random: () => number, weighted: ReadonlyArray<readonly [T, number]>): T {
  let roll = random() * weighted.reduce((sum, [, weight]) => sum + weight, 0);
  for (const [value, weight] of weighted) if ((roll -= weight) < 0) return value;
  return weighted.at(-1)![0];
}
