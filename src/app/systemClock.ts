import type { Clock } from "../core/ports";

/** The wall clock and real timers: the edge where the core's Clock meets the process (tests and benchmarks bring their own). */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};
