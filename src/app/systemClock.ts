import type { Clock } from "../core/ports";

/**
 * The wall clock and real timers: the edge where the core's Clock meets the process (tests and benchmarks bring their
 * own).
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const stop = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", stop);
        resolve();
      }, ms);
      signal?.addEventListener("abort", stop, { once: true });
    }),
};
