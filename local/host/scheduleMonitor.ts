import { TableClient, type TableEntity } from "@azure/data-tables";
import { nextOccurrence, type TimerSchedule } from "./ncrontab";

/**
 * The timer extension's schedule monitor: it records each timer's last and next occurrence in storage so that a
 * host that was down when a timer was due can tell, when it starts again, that the occurrence was missed and run it
 * at once with `isPastDue: true`. (The host keeps this in a blob under azure-webjobs-hosts; here it is a table row
 * in the same storage account, or memory.) `last`/`lastUpdated` undefined stand for .NET's DateTime.MinValue.
 */
export interface ScheduleStatus {
  last: Date | undefined;
  next: Date;
  lastUpdated: Date | undefined;
}

export interface ScheduleMonitor {
  getStatus(timerName: string): Promise<ScheduleStatus | undefined>;
  updateStatus(timerName: string, status: ScheduleStatus): Promise<void>;
}

export class MemoryScheduleMonitor implements ScheduleMonitor {
  readonly statuses = new Map<string, ScheduleStatus>();
  async getStatus(timerName: string): Promise<ScheduleStatus | undefined> {
    const s = this.statuses.get(timerName);
    return s && { ...s };
  }
  async updateStatus(timerName: string, status: ScheduleStatus): Promise<void> {
    this.statuses.set(timerName, { ...status });
  }
}

interface StatusEntity extends TableEntity {
  last: string;
  next: string;
  lastUpdated: string;
}

export class TableScheduleMonitor implements ScheduleMonitor {
  #table: TableClient;
  #hostId: string;
  #created: Promise<void> | undefined;

  constructor(connectionString: string, tableName: string, hostId = "local") {
    this.#table = TableClient.fromConnectionString(connectionString, tableName, { allowInsecureConnection: true });
    this.#hostId = hostId;
  }

  #ensure(): Promise<void> {
    this.#created ??= this.#table.createTable().then(() => undefined);
    return this.#created;
  }

  async getStatus(timerName: string): Promise<ScheduleStatus | undefined> {
    await this.#ensure();
    try {
      const e = await this.#table.getEntity<StatusEntity>(this.#hostId, timerName);
      const date = (s: string) => (s ? new Date(s) : undefined);
      const next = date(e.next);
      // A row without a readable `next` is treated like no row: the monitor re-initialises it (GetSafeStatusAsync).
      return next ? { last: date(e.last), next, lastUpdated: date(e.lastUpdated) } : undefined;
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return undefined;
      throw err;
    }
  }

  async updateStatus(timerName: string, status: ScheduleStatus): Promise<void> {
    await this.#ensure();
    await this.#table.upsertEntity<StatusEntity>(
      {
        partitionKey: this.#hostId,
        rowKey: timerName,
        last: status.last?.toISOString() ?? "",
        next: status.next.toISOString(),
        lastUpdated: status.lastUpdated?.toISOString() ?? "",
      },
      "Replace",
    );
  }
}

function requireNext(schedule: TimerSchedule, after: Date): Date {
  const next = nextOccurrence(schedule, after);
  if (!next) throw new Error(`timer schedule "${schedule.expression}" never fires`);
  return next;
}

/**
 * ScheduleMonitor.CheckPastDueAsync: how long past due the timer is at `now` (0 when not), and the status in effect.
 * With no status yet it writes an initial one (so a first occurrence missed later is still noticed). When the stored
 * `next` no longer matches what the schedule gives from the last run (the schedule changed), it recomputes, and if that
 * recomputed occurrence is already in the past it starts again from now rather than reporting a spurious past-due run.
 */
export async function checkPastDue(
  monitor: ScheduleMonitor,
  timerName: string,
  now: Date,
  schedule: TimerSchedule,
  lastStatus: ScheduleStatus | undefined,
): Promise<{ pastDueMs: number; status: ScheduleStatus }> {
  let recordedNext: Date;
  let status: ScheduleStatus;
  if (!lastStatus) {
    recordedNext = requireNext(schedule, now);
    status = { last: undefined, next: recordedNext, lastUpdated: now };
    await monitor.updateStatus(timerName, status);
  } else {
    let basis: Date = lastStatus.last ?? lastStatus.lastUpdated ?? now;
    let expectedNext = requireNext(schedule, basis);
    if (lastStatus.next.getTime() !== expectedNext.getTime()) {
      if (now.getTime() > expectedNext.getTime()) {
        expectedNext = requireNext(schedule, now);
        basis = now;
      }
      status = { last: undefined, next: expectedNext, lastUpdated: basis };
      await monitor.updateStatus(timerName, status);
      recordedNext = expectedNext;
    } else {
      status = lastStatus;
      recordedNext = lastStatus.next;
    }
  }
  return { pastDueMs: Math.max(0, now.getTime() - recordedNext.getTime()), status };
}
