import type { TableClient } from "@azure/data-tables";
import type { BucketState } from "../core/tokenBucket";
import {
  SHARED_BUCKET_SPECS,
  SHARED_BUDGET_KINDS,
  SHARED_WINDOWS,
  type SharedBudgetKind,
  type SharedBudgetRow,
  type SharedBudgetStore,
  type SharedGrant,
} from "../pacing/sharedWriteBudget";
import { statusOf } from "./tableErrors";

/**
 * The write budgets every host shares, one row per subscription in the shared table's "~budgets" partition. Every
 * write is conditional on the row's Table ETag, so two hosts never reserve the same tokens. The row is storage content,
 * hence input: a bucket that is not a finite count within its size, or starts further ahead than a host's clock could
 * put it, is read as absent (full, which the next answer's headers correct); a window's slot that is not a count within
 * the window's size, or lies further ahead, is dropped; a grant that is not a count within a budget's size or lapses
 * further ahead than a reservation lives is dropped. It can neither close the budget for ever nor open more than a
 * full bucket or window.
 */
export const BUDGETS_PARTITION = "~budgets";

/** A host stamps the row with its clock: this much skew between hosts is believable. */
const MAX_AHEAD_MS = 60_000;

interface BudgetEntity {
  partitionKey: string;
  rowKey: string;
  buckets: string;
  /** Absent in rows written before the windows were shared. */
  windows?: string;
  grants: string;
}

/** The most tokens any one kind counts (a grant of more is not one a host made). */
const MAX_KIND = (kind: SharedBudgetKind): number =>
  kind === "arm"
    ? SHARED_BUCKET_SPECS.arm.capacity
    : Math.max(...SHARED_WINDOWS.filter((w) => w.kind === kind).map((w) => w.spec.size));

const isCount = (x: unknown, max: number): x is number =>
  typeof x === "number" && Number.isFinite(x) && Math.abs(x) <= max;

function asObject(text: string | undefined): Record<string, unknown> {
  if (!text) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

export function checkedBuckets(text: string | undefined, now: number): SharedBudgetRow["buckets"] {
  const out: SharedBudgetRow["buckets"] = {};
  const parsed = asObject(text);
  const { tokens, at } = (parsed.arm ?? {}) as { tokens?: unknown; at?: unknown };
  if (!isCount(tokens, SHARED_BUCKET_SPECS.arm.capacity) || !isCount(at, Number.MAX_SAFE_INTEGER)) return out;
  if (at > now + MAX_AHEAD_MS) return out;
  out.arm = { tokens, at } satisfies BucketState;
  return out;
}

/**
 * The windows' slot counts: a slot that is not `[time, count]` within the window's size, or further ahead than a
 * reservation's lapse could put it, is dropped (a window then counts less, which the next answers' counts correct).
 */
export function checkedWindows(text: string | undefined, now: number): SharedBudgetRow["windows"] {
  const out: SharedBudgetRow["windows"] = {};
  const parsed = asObject(text);
  for (const { key, spec } of SHARED_WINDOWS) {
    const raw = parsed[key];
    if (!Array.isArray(raw)) continue;
    const slots: Array<[number, number]> = [];
    for (const slot of raw.slice(0, 1_000)) {
      if (!Array.isArray(slot) || slot.length !== 2) continue;
      const [at, n] = slot as unknown[];
      if (!isCount(at, Number.MAX_SAFE_INTEGER) || at > now + MAX_AHEAD_MS || !isCount(n, spec.size) || n <= 0)
        continue;
      slots.push([at, n]);
    }
    if (slots.length > 0) out[key] = slots;
  }
  return out;
}

export function checkedGrants(text: string | undefined, now: number): SharedBudgetRow["grants"] {
  const out: SharedBudgetRow["grants"] = {};
  for (const [host, raw] of Object.entries(asObject(text)).slice(0, 1_000)) {
    const { until, tokens } = (raw ?? {}) as { until?: unknown; tokens?: unknown };
    if (!isCount(until, Number.MAX_SAFE_INTEGER) || until > now + MAX_AHEAD_MS) continue;
    const counts: SharedGrant["tokens"] = {};
    const given = (typeof tokens === "object" && tokens !== null ? tokens : {}) as Record<string, unknown>;
    for (const kind of SHARED_BUDGET_KINDS) {
      const n = given[kind];
      if (isCount(n, MAX_KIND(kind)) && n > 0) counts[kind] = n;
    }
    out[host] = { until, tokens: counts };
  }
  return out;
}

export class SharedBudgetTable implements SharedBudgetStore {
  constructor(
    readonly table: TableClient,
    private readonly now: () => number,
  ) {}

  async read(subscriptionId: string): Promise<SharedBudgetRow> {
    try {
      const e = await this.table.getEntity<BudgetEntity>(BUDGETS_PARTITION, subscriptionId);
      const now = this.now();
      return {
        buckets: checkedBuckets(e.buckets, now),
        windows: checkedWindows(e.windows, now),
        grants: checkedGrants(e.grants, now),
        etag: e.etag,
      };
    } catch (err) {
      if (statusOf(err) === 404) return { buckets: {}, windows: {}, grants: {}, etag: undefined };
      throw err;
    }
  }

  async write(
    subscriptionId: string,
    row: Omit<SharedBudgetRow, "etag">,
    etag: string | undefined,
  ): Promise<string | false> {
    const entity: BudgetEntity = {
      partitionKey: BUDGETS_PARTITION,
      rowKey: subscriptionId,
      buckets: JSON.stringify(row.buckets),
      windows: JSON.stringify(row.windows),
      grants: JSON.stringify(row.grants),
    };
    try {
      const answer =
        etag === undefined
          ? await this.table.createEntity(entity)
          : await this.table.updateEntity(entity, "Replace", { etag });
      return answer.etag ?? "";
    } catch (err) {
      const status = statusOf(err);
      if (status === 409 || status === 412 || status === 404) return false;
      throw err;
    }
  }
}
