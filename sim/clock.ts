// The simulated clock. Every duration the simulator knows (Retry-After, operation durations, token-bucket refills,
// latency, the scale set's delayed ETag bump) is in simulated milliseconds. Simulated time runs `timeScale` times
// faster than real time, and a test can jump it forward with advance(): scheduled work that falls due runs at once.

interface Task {
  at: number;
  seq: number;
  run: () => void;
  /** A sleeper is released on stop(); other tasks (operation ends, ETag bumps) are dropped. */
  sleeper: boolean;
}

export class SimClock {
  private readonly realStart = Date.now();
  private offsetMs = 0;
  private tasks: Task[] = [];
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  /** @param timeScale simulated seconds per real second (1 = real time). */
  constructor(
    readonly timeScale = 1,
    private readonly epochMs = Date.now(),
  ) {
    if (!(timeScale > 0)) throw new Error(`timeScale must be > 0, got ${timeScale}`);
  }

  /** Simulated time, ms since the Unix epoch. */
  now(): number {
    return this.epochMs + (Date.now() - this.realStart) * this.timeScale + this.offsetMs;
  }

  nowIso(): string {
    return new Date(this.now()).toISOString();
  }

  /** Moves simulated time forward and runs whatever falls due. */
  advance(ms: number): void {
    if (ms < 0) throw new Error("the clock does not run backwards");
    this.offsetMs += ms;
    this.runDue();
  }

  /** Runs `run` when simulated time reaches `at` (or at once if it has). */
  at(at: number, run: () => void, sleeper = false): void {
    if (this.stopped) return;
    this.tasks.push({ at, seq: this.seq++, run, sleeper });
    this.tasks.sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.arm();
  }

  after(ms: number, run: () => void): void {
    this.at(this.now() + ms, run);
  }

  /** Resolves after `ms` simulated milliseconds (sooner if the clock is advanced). */
  sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.at(this.now() + ms, resolve, true));
  }

  /** Runs every task that is due now, in time order; tasks scheduled by tasks run too if due. */
  runDue(): void {
    for (;;) {
      const next = this.tasks[0];
      if (next === undefined || next.at > this.now()) break;
      this.tasks.shift();
      next.run();
    }
    this.arm();
  }

  /** When the next scheduled task falls due (simulated ms), or undefined when none is pending. */
  nextTaskAt(): number | undefined {
    return this.tasks[0]?.at;
  }

  /** Real milliseconds until simulated `at`. */
  realDelayUntil(at: number): number {
    return Math.max(0, (at - this.now()) / this.timeScale);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // Resolve pending sleeps so nothing hangs on a stopped simulator.
    const pending = this.tasks;
    this.tasks = [];
    for (const t of pending) if (t.sleeper) t.run();
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const next = this.tasks[0];
    if (next === undefined || this.stopped) return;
    this.timer = setTimeout(() => this.runDue(), Math.ceil(this.realDelayUntil(next.at)));
    this.timer.unref();
  }
}
