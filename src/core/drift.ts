import { declarationKey, type StoredDeclaration } from "./declarations";
import type { EventCaller } from "./eventCaller";
import type { TargetRef } from "./resourceIds";
import { applyIntents, intentSatisfied, type NicConfiguration, type PoolIntent } from "./networkProfile";

/**
 * Drift: a membership poolsync had applied (its declaration's outcome is "applied") that a reconcile finds undone on a
 * model, an instance or a NIC: a declared pool missing, or a removed one back. Pure: which resources drifted, and
 * the record people read (who wrote the change, when it was seen, how it was found, when it was repaired).
 */

/** `pool`: an IP-based pool's addresses (issue 43), which the pool itself lists. */
export type DriftResourceKind = "model" | "instance" | "nic" | "pool";

/** What a reconcile read of one resource, seen as NIC configurations (a VM's NICs: one resource per NIC). */
export interface ObservedResource {
  kind: DriftResourceKind;
  /** One ID per NIC configuration for a VM's NICs (each NIC is its own resource); else one ID for them all. */
  ids: readonly string[];
  nics: readonly NicConfiguration[];
}

export interface DriftFinding {
  declaration: StoredDeclaration;
  resourceKind: DriftResourceKind;
  resourceId: string;
}

export interface DriftBy {
  name: string;
  id: string;
  appId: string;
}

export const UNKNOWN_WRITER: DriftBy = { name: "unknown", id: "unknown", appId: "unknown" };

export interface Drift {
  /** When a reconcile saw it (ISO). */
  at: string;
  by: DriftBy;
  operation: string;
  correlationId: string;
  /** `event`: an ARM event named the writer; `timer`: found by reading, with no event to say who. */
  source: "event" | "timer";
  repairedAt: string | undefined;
  resourceKind: DriftResourceKind;
  resourceId: string;
}

/** The resource ID an intent's edit touches: the NIC it changes, for a VM's NICs. */
function touchedId(r: ObservedResource, intent: PoolIntent): string | undefined {
  if (r.ids.length <= 1) return r.ids[0];
  const edit = applyIntents(r.nics as NicConfiguration[], [intent]).nics;
  const i = edit ? edit.findIndex((n, j) => n !== r.nics[j]) : -1;
  return i >= 0 ? r.ids[i] : r.ids[0];
}

/** One finding per applied declaration that some resource no longer satisfies (the first such resource). */
export function findDrift(
  declarations: readonly StoredDeclaration[],
  intents: readonly PoolIntent[],
  resources: readonly ObservedResource[],
): DriftFinding[] {
  const out: DriftFinding[] = [];
  declarations.forEach((d, i) => {
    const intent = intents[i];
    if (!intent || d.outcome.kind !== "applied") return;
    for (const r of resources) {
      if (intentSatisfied(r.nics as NicConfiguration[], intent) !== false) continue;
      const resourceId = touchedId(r, intent);
      if (resourceId) out.push({ declaration: d, resourceKind: r.kind, resourceId });
      return;
    }
  });
  return out;
}

/**
 * The record of one finding. The writer is the last foreign write seen on the resource (by its event) after the
 * declaration was applied; an earlier one cannot have undone it, and none at all leaves the writer unknown.
 */
export function driftOf(f: DriftFinding, writer: SeenWriter | undefined, now: number): Drift {
  const appliedAt = Date.parse(f.declaration.outcome.at);
  const caused = writer && (Number.isNaN(appliedAt) || writer.seenAt >= appliedAt) ? writer : undefined;
  return {
    at: new Date(now).toISOString(),
    by: caused
      ? { name: caused.name ?? "unknown", id: caused.id ?? "unknown", appId: caused.appId ?? "unknown" }
      : UNKNOWN_WRITER,
    operation: caused?.operation ?? "unknown",
    correlationId: caused?.correlationId ?? "",
    source: caused ? "event" : "timer",
    repairedAt: undefined,
    resourceKind: f.resourceKind,
    resourceId: f.resourceId,
  };
}

/** A resource's last foreign write, as its ARM event said, and when poolsync saw that event (its clock). */
export type SeenWriter = EventCaller & { seenAt: number };

export interface LastWriters {
  record(resourceId: string, caller: EventCaller): Promise<void>;
  read(resourceId: string): Promise<SeenWriter | undefined>;
}

export interface DriftStore {
  record(target: TargetRef, declarationKey: string, drift: Drift): Promise<void>;
  /** The most recent drift of each declaration, by declaration key. */
  listForTarget(target: TargetRef): Promise<Map<string, Drift>>;
}

export const driftKey = (d: StoredDeclaration) => declarationKey(d);
