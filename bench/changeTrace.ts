// The latency workload's per-change timeline: when each change was enqueued, taken (its declaration stored), written
// on the model and on its last instance, and visible everywhere, from poolsync's own log lines (bench/poolsyncRun.ts
// countingLogger) and the convergence monitor. Real ms from the change's enqueue (the workload runs at 1x).
import type { TraceLine } from "./poolsyncRun";
import type { Change } from "./world";
import { percentile } from "./stats";

/**
 * How long after a change shows its write's answer may still be logged: the monitor sees the simulator's state change
 * at once, poolsync only when its operation poll reads the answer.
 */
const ANSWER_AFTER_VISIBLE_MS = 5_000;

export interface ChangeTimeline {
  id: number;
  scaleSetId: string;
  /** ms after the enqueue; undefined when the log has no such line for it. */
  storedMs?: number;
  passStartedMs?: number;
  modelWrittenMs?: number;
  lastInstanceWrittenMs?: number;
  visibleMs: number;
}

export interface TraceSummary {
  /** Medians over every change that became visible. */
  median: Omit<ChangeTimeline, "id" | "scaleSetId">;
  slowest: ChangeTimeline[];
}

/**
 * `enqueuedAt` and `visibleAt` in real ms (the workload's clock at 1x, shifted to Date.now()'s); `passes`: each pass's
 * target and real start.
 */
export function traceChanges(
  changes: Change[],
  enqueuedAt: Map<number, number>,
  visibleAt: Map<number, number>,
  lines: TraceLine[],
  passes: Array<{ targetId: string; startedAt: number }>,
  slowest = 3,
): TraceSummary {
  const timelines: ChangeTimeline[] = [];
  for (const c of changes) {
    const t0 = enqueuedAt.get(c.id);
    const seen = visibleAt.get(c.id);
    if (t0 === undefined || seen === undefined) continue;
    const ss = c.scaleSetId.toLowerCase();
    const pool = `${c.state}:${c.poolId.toLowerCase()}`;
    const mine = lines.filter(
      (l) => l.scaleSetId === ss && l.pools.includes(pool) && l.at >= t0 && l.at <= seen + ANSWER_AFTER_VISIBLE_MS,
    );
    const stored = mine.find((l) => l.kind === "stored")?.at;
    const model = mine.find((l) => l.kind === "model written")?.at;
    const instances = mine.filter((l) => l.kind === "instance written").map((l) => l.at);
    // The pass that wrote it: the last one of its scale set to start after the declaration was stored.
    const first = model ?? instances[0];
    const pass = passes
      .filter((p) => p.targetId === ss && p.startedAt >= (stored ?? t0) && p.startedAt <= (first ?? seen))
      .at(-1)?.startedAt;
    const rel = (at: number | undefined) => (at === undefined ? undefined : at - t0);
    timelines.push({
      id: c.id,
      scaleSetId: c.scaleSetId.split("/").at(-1) ?? c.scaleSetId,
      ...(stored !== undefined ? { storedMs: rel(stored) } : {}),
      ...(pass !== undefined ? { passStartedMs: rel(pass) } : {}),
      ...(model !== undefined ? { modelWrittenMs: rel(model) } : {}),
      ...(instances.length > 0 ? { lastInstanceWrittenMs: rel(Math.max(...instances)) } : {}),
      visibleMs: seen - t0,
    });
  }
  const med = (k: keyof ChangeTimeline) => {
    const xs = timelines.map((t) => t[k]).filter((x): x is number => typeof x === "number");
    return xs.length > 0 ? percentile(xs, 50) : undefined;
  };
  const median: TraceSummary["median"] = { visibleMs: med("visibleMs") ?? 0 };
  for (const k of ["storedMs", "passStartedMs", "modelWrittenMs", "lastInstanceWrittenMs"] as const) {
    const m = med(k);
    if (m !== undefined) median[k] = m;
  }
  return { median, slowest: [...timelines].sort((a, b) => b.visibleMs - a.visibleMs).slice(0, slowest) };
}
