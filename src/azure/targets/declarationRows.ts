import { z } from "zod";
import {
  MAX_DECLARED_AHEAD_MS,
  fromIpSelectorText,
  ipSelectorText,
  type Declaration,
  type DeclaredBy,
  type Outcome,
  type StoredDeclaration,
} from "../../core/declarations";
import { declarationRowKey } from "./rowKeys";
import { adminInstancesSchema } from "../../core/messages";
import { ADMIN_STATES } from "../../core/poolKinds";

/**
 * A declaration row as stored, the same columns every earlier version wrote (an upgraded app reads them in place). A
 * row that does not decode is not a declaration poolsync stored: it is skipped and named, never a pass's input.
 *
 * A finished `absent` is removed by marking its row (`removedAt`), not deleting it: a delayed or redelivered older
 * message for the same key must still lose to it, and with no row it would be created and win. Readers never see
 * marked rows; the marks are dropped once no older message can still arrive (a queue message lives at most 7 days).
 */

export const REMOVED_RETENTION_MS = 7 * 24 * 3_600_000;

export interface DeclarationEntity {
  partitionKey: string;
  rowKey: string;
  scaleSetId: string;
  backendPoolId: string;
  ipConfiguration: string;
  state: string;
  declaredAt: string;
  requestId: string;
  declaredById: string;
  declaredByName: string;
  declaredVia: string;
  outcomeKind: string;
  outcomeReason: string;
  appliedEtag: string;
  outcomeAt: string;
  appliedEverywhere: boolean;
  retryAt: string;
  attempts: number;
  removedAt?: string;
  /** Issue 43, each only when set (rows written before it have none, and decode the same). */
  adminState?: string;
  /** JSON array of instance IDs or VM names. */
  adminInstances?: string;
  movedTo?: string;
  /** "pool" when applied on an IP-based pool's own address list; absent or "" otherwise. */
  appliedVia?: string;
}

const OUTCOME_KINDS = ["pending", "applied", "failed", "refused", "target-deleted", "target-deleting"] as const;
const id = z.string().min(1).max(1_024);
const time = z
  .string()
  .max(64)
  .refine((s) => Number.isFinite(Date.parse(s)), "not a time");
const optionalTime = z
  .string()
  .max(64)
  .refine((s) => s === "" || Number.isFinite(Date.parse(s)), "not a time");

const schema = z.object({
  rowKey: z.string(),
  etag: z.string(),
  scaleSetId: id,
  backendPoolId: id,
  ipConfiguration: z.string().max(256).default(""),
  state: z.enum(["present", "absent"]),
  declaredAt: time,
  requestId: id,
  declaredById: z.string().max(1_024).optional(),
  declaredByName: z.string().max(1_024).optional(),
  declaredVia: z.string().max(16).optional(),
  outcomeKind: z.enum(OUTCOME_KINDS),
  outcomeReason: z.string().max(4_096).optional(),
  appliedEtag: z.string().max(256).optional(),
  outcomeAt: time,
  appliedEverywhere: z.boolean().optional(),
  retryAt: optionalTime.optional(),
  attempts: z.number().int().min(0).max(1_000_000).optional(),
  removedAt: optionalTime.optional(),
  adminState: z.enum(ADMIN_STATES).optional(),
  adminInstances: z
    .string()
    .max(32_000)
    .transform((text, ctx) => {
      const parsed = adminInstancesSchema.safeParse(safeJson(text));
      if (!parsed.success) {
        ctx.addIssue({ code: "custom", message: "not a list of instances" });
        return z.NEVER;
      }
      return parsed.data;
    })
    .optional(),
  movedTo: id.optional(),
  appliedVia: z.enum(["", "pool"]).optional(),
});

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export type DecodedDeclaration =
  { ok: true; declaration: StoredDeclaration; removedAt: string | undefined } | { ok: false; reason: string };

/** The row as a stored declaration (its declaredAt is held to its bound where it is compared: see outranks). */
export function decodeDeclaration(row: Record<string, unknown>, _now: number): DecodedDeclaration {
  const parsed = schema.safeParse(row);
  if (!parsed.success)
    return {
      ok: false,
      reason: parsed.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; "),
    };
  const r = parsed.data;
  const outcome: Outcome = { kind: r.outcomeKind, at: r.outcomeAt };
  if (r.outcomeReason) outcome.reason = r.outcomeReason;
  if (r.appliedEtag) outcome.appliedEtag = r.appliedEtag;
  if (r.appliedEverywhere) outcome.appliedEverywhere = true;
  if (r.retryAt) outcome.retryAt = r.retryAt;
  if (r.appliedVia === "pool") outcome.via = "pool";
  const selector = fromIpSelectorText(r.ipConfiguration);
  const declaration: StoredDeclaration = {
    scaleSetId: r.scaleSetId,
    backendPoolId: r.backendPoolId,
    ...selector,
    state: r.state,
    declaredAt: r.declaredAt,
    requestId: r.requestId,
    // Rows stored before callers were recorded came through the queue or an unauthenticated API: say so.
    declaredBy: {
      id: r.declaredById || "unknown",
      name: r.declaredByName || "unknown",
      via: (["entra", "key", "queue"].includes(r.declaredVia ?? "") ? r.declaredVia : "key") as DeclaredBy["via"],
    },
    ...(r.adminState ? { adminState: r.adminState } : {}),
    ...(r.adminInstances ? { adminInstances: r.adminInstances } : {}),
    ...(r.movedTo ? { movedTo: r.movedTo } : {}),
    outcome,
    attempts: r.attempts ?? 0,
    rowEtag: r.etag,
  };
  // A row under another key than its own fields give is not one poolsync wrote.
  if (declarationRowKey(declaration) !== r.rowKey)
    return { ok: false, reason: "its row key is not its pool and ip configuration" };
  return { ok: true, declaration, removedAt: r.removedAt || undefined };
}

export function outcomeColumns(
  o: Outcome,
): Pick<
  DeclarationEntity,
  "outcomeKind" | "outcomeReason" | "appliedEtag" | "outcomeAt" | "appliedEverywhere" | "retryAt" | "appliedVia"
> {
  return {
    outcomeKind: o.kind,
    outcomeReason: (o.reason ?? "").slice(0, 4_096),
    appliedEtag: o.appliedEtag ?? "",
    outcomeAt: o.at,
    appliedEverywhere: o.appliedEverywhere ?? false,
    retryAt: o.retryAt ?? "",
    // Always written: outcomes are merged into the row, and a later outcome must clear an earlier one's.
    appliedVia: o.via ?? "",
  };
}

/** A new declaration's row: pending, no attempts yet. */
export function declarationEntity(partitionKey: string, d: Declaration, at: string): DeclarationEntity {
  return {
    partitionKey,
    rowKey: declarationRowKey(d),
    scaleSetId: d.scaleSetId,
    backendPoolId: d.backendPoolId,
    // The IP version stays encoded in this column ("@IPv6", "nic/@IPv6") as every earlier version wrote it, and is
    // decoded into Declaration.ipVersion on read: rows read the same whichever version stored them.
    ipConfiguration: ipSelectorText(d),
    state: d.state,
    declaredAt: d.declaredAt,
    requestId: d.requestId,
    declaredById: d.declaredBy.id,
    declaredByName: d.declaredBy.name,
    declaredVia: d.declaredBy.via,
    ...(d.adminState !== undefined ? { adminState: d.adminState } : {}),
    ...(d.adminInstances !== undefined ? { adminInstances: JSON.stringify(d.adminInstances) } : {}),
    ...(d.movedTo !== undefined ? { movedTo: d.movedTo } : {}),
    attempts: 0,
    ...outcomeColumns({ kind: "pending", at }),
  };
}

/** The columns an outcome changes: attempts counted up on a failure, back to 0 when applied. */
export function outcomeUpdate(d: StoredDeclaration, outcome: Outcome): Record<string, unknown> {
  const attempts = outcome.kind === "applied" ? 0 : d.attempts + (outcome.kind === "failed" ? 1 : 0);
  return { attempts, ...outcomeColumns(outcome) };
}

/**
 * Whether the stored declaration outranks a newer delivery of its key: declared later. A stored declaredAt further
 * ahead than intake ever accepts (a planted value, a clock that jumped) outranks nothing, or it would pin the key.
 */
export function outranks(
  held: Pick<Declaration, "declaredAt">,
  d: Pick<Declaration, "declaredAt">,
  now: number,
): boolean {
  const at = Date.parse(held.declaredAt);
  return at <= now + MAX_DECLARED_AHEAD_MS && at > Date.parse(d.declaredAt);
}
