import type { Drift } from "./drift";

/**
 * A target's history: a bounded timeline (the last HISTORY_MAX_ENTRIES, none older than HISTORY_MAX_AGE_MS) of what
 * happened to it: declarations and who made them, each write poolsync made, each drift with its attribution, each
 * failure with its reason. For people; nothing decides anything from it.
 */

export const HISTORY_MAX_ENTRIES = 200;
export const HISTORY_MAX_AGE_MS = 30 * 24 * 3_600_000;

export type HistoryEntry =
  | {
      at: string;
      kind: "declaration";
      backendPoolId: string;
      ipConfiguration: string;
      state: string;
      by: { id: string; name?: string; via: string };
      requestId: string;
    }
  | {
      at: string;
      kind: "write";
      resourceId: string;
      resourceKind: string;
      etagBefore: string;
      etagAfter: string;
      added: string[];
      removed: string[];
      outcome: string;
      clientRequestId: string;
    }
  | {
      at: string;
      kind: "drift";
      backendPoolId: string;
      ipConfiguration: string;
      resourceId: string;
      by: { name: string; id: string; appId: string };
      operation: string;
      correlationId: string;
      source: string;
      repairedAt: string | null;
    }
  | { at: string; kind: "failure"; result: string; reason: string };

export interface HistoryPage {
  entries: HistoryEntry[];
  /** Pass as `cursor` for the next (older) page; absent on the last page. */
  next?: string;
}

export interface TargetHistory {
  /** One blind insert: no read first. */
  append(targetId: string, entry: HistoryEntry): Promise<void>;
  /** Several entries of one target at once (one round trip per 100 where the store can). */
  appendAll?(targetId: string, entries: readonly HistoryEntry[]): Promise<void>;
  /** Newest first. */
  page(targetId: string, limit: number, cursor?: string): Promise<HistoryPage>;
  /** Removes what is beyond the bound in every target's timeline; returns how many entries went. */
  prune(now: number): Promise<number>;
}

/** "present:<pool>" / "absent:<pool>", as the write log names the pools a write moves, split into added and removed. */
export function poolsMoved(pools: readonly string[]): { added: string[]; removed: string[] } {
  const added: string[] = [];
  const removed: string[] = [];
  for (const p of pools) {
    const i = p.indexOf(":");
    (p.slice(0, i) === "absent" ? removed : added).push(p.slice(i + 1));
  }
  return { added, removed };
}

// ——— the typed events a pass emits as it acts (each step that the history keeps) ———

/** What a pass did that its target's history keeps: emitted by the step itself, as it happens. */
export type PassEvent =
  /** An ARM write (one attempt of the If-Match loop), with the pools it moves as "present:<pool>" / "absent:<pool>". */
  | {
      kind: "write";
      resourceId: string;
      resourceKind: "model" | "instance" | "nic" | "pool";
      ifMatch: string;
      /** The answer's ETag (empty when the write failed). */
      etag: string;
      pools: readonly string[];
      /** "ok", or the error as describeError words it. */
      outcome: string;
      clientRequestId: string;
    }
  /** A drift found on one of the target's declarations (stored with the declaration too). */
  | { kind: "drift"; backendPoolId: string; ipConfiguration: string; drift: Drift }
  /** The pass ended without finishing: it failed or comes back. */
  | { kind: "ended"; result: "failed" | "requeued"; reason: string };

/** Where a pass's events go (its history, in its commit or at once). */
export interface PassEvents {
  emit(event: PassEvent): void;
}

/** The history entry of a pass's event, at `at` (ISO) unless the event carries its own time. */
export function historyEntryOf(e: PassEvent, at: string): HistoryEntry {
  switch (e.kind) {
    case "write": {
      const { added, removed } = poolsMoved(e.pools);
      return {
        at,
        kind: "write",
        resourceId: e.resourceId,
        resourceKind: e.resourceKind,
        etagBefore: e.ifMatch,
        etagAfter: e.etag,
        added,
        removed,
        outcome: e.outcome,
        clientRequestId: e.clientRequestId,
      };
    }
    case "drift": {
      const d = e.drift;
      return {
        at: d.at || at,
        kind: "drift",
        backendPoolId: e.backendPoolId,
        ipConfiguration: e.ipConfiguration,
        resourceId: d.resourceId,
        by: d.by,
        operation: d.operation,
        correlationId: d.correlationId,
        source: d.source,
        repairedAt: d.repairedAt ? d.repairedAt : null,
      };
    }
    case "ended":
      return { at, kind: "failure", result: e.result, reason: e.reason };
  }
}
