/**
 * `Promise.all(items.map(work))` with at most `limit` at work at once: for work that
 * starts processes (git), so that a session of hundreds of iterations does not start
 * hundreds of them together. The results keep the items' order.
 */
export async function mapWithLimit<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
