/** The p-th percentile (nearest rank) of an ascending list; NaN when it is empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** p50 and p99 (ms) of `count` runs of `run`, timed one after the other. */
export async function timedPercentiles(count: number, run: (i: number) => unknown): Promise<{ p50Ms: number; p99Ms: number }> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await run(i);
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return { p50Ms: percentile(samples, 50), p99Ms: percentile(samples, 99) };
}
