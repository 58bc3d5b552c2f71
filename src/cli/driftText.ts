import type { DriftAnswer } from "../intake/driftView";

/** A membership's most recent drift, for the terminal: one line, the writer's ids in full. */
export function driftLine(drift: DriftAnswer | null | undefined): string | undefined {
  if (!drift) return undefined;
  const repaired = drift.repairedAt ? `repaired ${drift.repairedAt}` : "not repaired yet";
  return `    drift ${drift.at} by ${drift.by.name} (object ${drift.by.id}, app ${drift.by.appId}) ${drift.operation} on ${drift.resourceKind} ${drift.resourceId}; ${drift.source === "event" ? "seen by its event" : "found by the timer"}${drift.correlationId ? `, correlation ${drift.correlationId}` : ""}; ${repaired}`;
}
