import { InFlight, Sleeper } from "./inflight";
import type { InvocationInput } from "./invoke";
import { nextOccurrence, type TimerSchedule } from "./ncrontab";
import { checkPastDue, type ScheduleMonitor, type ScheduleStatus } from "./scheduleMonitor";
import { toDotNetDateString } from "./typedData";

/** The timer payload the host sends (TimerInfo, serialised with the host's PascalCase); the library camel-cases it. */
export interface HostTimerInfo {
  Schedule: { AdjustForDST: boolean };
  ScheduleStatus: { Last: string; Next: string; LastUpdated: string } | null;
  IsPastDue: boolean;
}

/** .NET's DateTime.MinValue as Newtonsoft writes it: what `last` shows before a timer ever ran. */
const DOTNET_MIN_DATE = "0001-01-01T00:00:00";

export function toHostTimerInfo(status: ScheduleStatus | undefined, isPastDue: boolean): HostTimerInfo {
  const d = (x: Date | undefined) => (x ? toDotNetDateString(x) : DOTNET_MIN_DATE);
  return {
    Schedule: { AdjustForDST: true },
    ScheduleStatus: status ? { Last: d(status.last), Next: d(status.next), LastUpdated: d(status.lastUpdated) } : null,
    IsPastDue: isPastDue,
  };
}

export interface TimerListenerOptions {
  functionName: string;
  /** The trigger binding's name: the input is passed under it. */
  bindingName: string;
  schedule: TimerSchedule;
  runOnStartup: boolean;
  /** Undefined when the function's useMonitor is off (then the payload's scheduleStatus is null, as in the host). */
  monitor: ScheduleMonitor | undefined;
  invoke: (input: InvocationInput) => Promise<unknown>;
  inFlight: InFlight;
  onError: (err: unknown) => void;
  now?: () => Date;
}

/** setTimeout's ceiling (~24.8 days); longer waits are chained, like the extension's remaining-interval handling. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * The timer extension's TimerListener. At start: with a monitor, a missed occurrence (the stored `next` is in the
 * past) runs at once with isPastDue=true; else runOnStartup runs at once; then each occurrence runs on schedule
 * with isPastDue=false. One invocation at a time; a failing invocation is logged and never stops the schedule.
 * After each run the status becomes last=run time (or the scheduled time, if the timer fired a little early),
 * next=the following occurrence.
 */
export class TimerListener {
  readonly #o: TimerListenerOptions;
  readonly #sleeper = new Sleeper();
  #status: ScheduleStatus | undefined;
  #loop: Promise<void> | undefined;
  #now: () => Date;

  constructor(options: TimerListenerOptions) {
    this.#o = options;
    this.#now = options.now ?? (() => new Date());
  }

  /** The next scheduled occurrence (for the startup print). */
  get next(): Date | undefined {
    return this.#status?.next;
  }

  async start(): Promise<void> {
    const now = this.#now();
    let isPastDue = false;
    if (this.#o.monitor) {
      const stored = await this.#o.monitor.getStatus(this.#o.functionName);
      const checked = await checkPastDue(this.#o.monitor, this.#o.functionName, now, this.#o.schedule, stored);
      this.#status = checked.status;
      isPastDue = checked.pastDueMs > 0;
    }
    this.#status ??= { last: undefined, next: this.#nextAfter(now), lastUpdated: undefined };
    const startup = isPastDue ? "pastDue" : this.#o.runOnStartup ? "runOnStartup" : undefined;
    this.#loop = this.#run(startup);
  }

  async stop(): Promise<void> {
    this.#sleeper.abort();
    await this.#loop;
  }

  #nextAfter(t: Date): Date {
    const next = nextOccurrence(this.#o.schedule, t);
    if (!next) throw new Error(`${this.#o.functionName}: timer schedule "${this.#o.schedule.expression}" never fires`);
    return next;
  }

  async #run(startup: "pastDue" | "runOnStartup" | undefined): Promise<void> {
    if (startup) await this.#invoke(this.#now(), startup === "pastDue", startup === "runOnStartup");
    while (!this.#sleeper.aborted) {
      const status = this.#status as ScheduleStatus;
      let wait = status.next.getTime() - this.#now().getTime();
      while (wait > 0 && !this.#sleeper.aborted) {
        await this.#sleeper.sleep(Math.min(wait, MAX_TIMEOUT_MS));
        wait = status.next.getTime() - this.#now().getTime();
      }
      if (this.#sleeper.aborted) return;
      await this.#invoke(this.#now(), false, false);
    }
  }

  async #invoke(invocationTime: Date, isPastDue: boolean, runOnStartup: boolean): Promise<void> {
    if (this.#sleeper.aborted) return;
    const status = this.#status as ScheduleStatus;
    const payload = toHostTimerInfo(this.#o.monitor ? status : undefined, isPastDue);
    try {
      await this.#o.inFlight.run(() =>
        this.#o.invoke({
          inputData: [{ name: this.#o.bindingName, data: { json: JSON.stringify(payload) } }],
          triggerMetadata: {},
        }),
      );
    } catch (err) {
      this.#o.onError(err);
    }
    // A timer that fired just before its time (clock skew) must not compute the same `next` twice.
    const adjusted = !isPastDue && !runOnStartup && status.next > invocationTime ? status.next : invocationTime;
    this.#status = { last: adjusted, next: this.#nextAfter(adjusted), lastUpdated: adjusted };
    if (this.#o.monitor) {
      try {
        await this.#o.monitor.updateStatus(this.#o.functionName, this.#status);
      } catch (err) {
        this.#o.onError(err);
      }
    }
  }
}
