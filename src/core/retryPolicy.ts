/** How long to wait between re-reads after a 412: short (someone just wrote), growing, jittered so racers spread. */
export function preconditionBackoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(2_000, 100 * 2 ** attempt);
  return Math.round(base * (0.5 + random()));
}

/** Delay before a re-enqueued attempt when ARM gave no Retry-After: 5 s, 10 s, 20 s … capped at 10 min. */
export function requeueBackoffMs(attempt: number): number {
  return Math.min(600_000, 5_000 * 2 ** Math.max(0, attempt - 1));
}

/** Runs fn over items with at most `limit` in flight; stops starting new ones after the first error and rethrows it. */
export async function mapLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined && next < items.length) {
      const item = items[next++] as T;
      try {
        await fn(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
}
