import { FAULTS, type FaultName, type SoakRun } from "./run";

// The report: per fault, how often it was tried, how often the simulator applied it, and how many of those
// tries ended with every invariant held on their target.

export interface FaultRow {
  fault: FaultName;
  tried: number;
  /** Of those tried, how many the simulator actually applied to a request (sim faults only; else = tried). */
  fired: number;
  held: number;
}

export function faultRows(run: SoakRun, badTargets: ReadonlySet<string>): FaultRow[] {
  const { faultTargets, tried, fired, simHandles, violations, counters } = run;
  return FAULTS.map((f) => {
    const targets = faultTargets.get(f) ?? [];
    const t = tried.get(f) ?? 0;
    const runWide = violations.length > 0;
    const held = targets.filter((x) => (x === "*" ? !runWide : !badTargets.has(x) && !badTargets.has("*"))).length;
    // Fired: how often the simulator applied it to a request (a storm: when one of our writes came while it waited).
    const isSim =
      simHandles.some((s) => s.f === f) ||
      f === "412 storm (interleaved writer)" ||
      f === "Flexible: 412 storm on a NIC (interleaved stale NIC PUT)";
    // Chaos that waits for a moment (one of our instance writes, a reused ID) fired when that moment came.
    const firedBy: Partial<Record<FaultName, string>> = {
      "invocation killed mid-reconcile": "platform:process-restarts",
      "scale-in during a reconcile (writes to a leaving instance: 400 not active / 409 marked for deletion)":
        "chaos:scale-in-during-reconcile",
      "scale-out reusing an instance ID (a reborn instance, another writer's ip configuration on it)":
        "chaos:instance-id-reused",
      "cross-instance conflict (another writer's scale-set operation during our instance writes)":
        "chaos:cross-scale-set-write",
    };
    const counter = firedBy[f];
    const firedCount = isSim ? (fired.get(f) ?? 0) : counter !== undefined ? (counters[counter] ?? 0) : t;
    return { fault: f, tried: t, fired: firedCount, held };
  });
}

export function formatTable(r: { faults: FaultRow[] }): string {
  const lines = ["| fault / input | tried | fired | held |", "|---|---:|---:|---:|"];
  for (const f of r.faults) lines.push(`| ${f.fault} | ${f.tried} | ${f.fired} | ${f.held} |`);
  return lines.join("\n");
}
