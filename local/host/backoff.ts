/**
 * The queue listener's poll delay: the WebJobs SDK's RandomizedExponentialBackoffStrategy. A poll that found
 * messages resets the delay to the minimum; each empty poll grows it by (2^n - 1) x a randomised delta (the minimum,
 * +/-20%), capped at maxPollingInterval, where it then stays until messages appear again.
 */
export class RandomizedExponentialBackoff {
  readonly #min: number;
  readonly #max: number;
  readonly #delta: number;
  readonly #random: () => number;
  #current: number;
  #exponent = 0;

  constructor(minimumMs: number, maximumMs: number, random: () => number = Math.random) {
    if (minimumMs <= 0 || maximumMs < minimumMs)
      throw new Error(`backoff needs 0 < minimum <= maximum (got ${minimumMs}, ${maximumMs})`);
    this.#min = minimumMs;
    this.#max = maximumMs;
    this.#delta = minimumMs;
    this.#random = random;
    this.#current = minimumMs;
  }

  nextDelay(executionSucceeded: boolean): number {
    if (executionSucceeded) {
      this.#current = this.#min;
      this.#exponent = 1;
    } else if (this.#current !== this.#max) {
      let interval = this.#min;
      if (this.#exponent > 0) {
        const randomised = this.#delta * (0.8 + 0.4 * this.#random());
        interval += (Math.pow(2, this.#exponent) - 1) * randomised;
      }
      if (interval < this.#max) {
        this.#current = interval;
        this.#exponent++;
      } else {
        this.#current = this.#max;
      }
    }
    return this.#current;
  }
}
