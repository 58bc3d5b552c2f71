import type { BucketSpec } from "./tokenBucket";
import type { WindowSpec } from "./slidingWindow";

/**
 * The budgets Compute RP and Network RP meter a subscription's requests by, at the sizes Azure publishes (every number
 * with its source in sim/README.md, "Throttling"):
 * - CRP's windows per subscription and region, as every public sample of `x-ms-ratelimit-remaining-resource` names
 *   them (`GetVMScaleSet3Min;197,GetVMScaleSet30Min;1297`, `PutVM3Min;237,PutVM30Min;1188`,
 *   `HighCostGetVMScaleSet30Min` allowed 1,800, `…3Min` 180);
 * - CRP's own bucket per resource (the documented per-minute table: VMSS GET 36 then 12 a minute, writes 12 then 4);
 * - NRP's 10,000 reads and 1,000 writes every 5 minutes per subscription and region (no header tells what is left).
 * A policy no sample names takes the windows of its kind (reads GetVMScaleSet's, writes PutVM's). The pacers plan on a
 * little less than each size (`plannable`): a request reaches the server a latency after it is counted here.
 */

const MIN = 60_000;
const windows = (short: number, long: number): Record<"3Min" | "30Min", WindowSpec> => ({
  "3Min": { size: short, windowMs: 3 * MIN },
  "30Min": { size: long, windowMs: 30 * MIN },
});

/** The reads poolsync makes, by the CRP policy they are charged to (the name in headers and 429 details). */
export type CrpReadPolicy = "GetVMScaleSet" | "GetVMScaleSetVM" | "HighCostGetVMScaleSet" | "GetVM" | "GetOperation";

/** The writes poolsync makes, by CRP policy: a model write, an instance write. */
export type CrpWritePolicy = "CreateVMScaleSet" | "UpdateVMScaleSetVM";

const READ_WINDOWS = windows(200, 1_300);
const WRITE_WINDOWS = windows(240, 1_200);

/** CRP's windows per subscription and region, by policy (VM GETs and operation polls have none published). */
export const CRP_WINDOWS: Record<CrpReadPolicy | CrpWritePolicy, Partial<Record<"3Min" | "30Min", WindowSpec>>> = {
  GetVMScaleSet: READ_WINDOWS,
  GetVMScaleSetVM: READ_WINDOWS,
  // VMSS LIST, VMSS VM LIST and VM LIST share it.
  HighCostGetVMScaleSet: windows(180, 1_800),
  GetVM: {},
  GetOperation: {},
  CreateVMScaleSet: WRITE_WINDOWS,
  UpdateVMScaleSetVM: WRITE_WINDOWS,
};

const perMinute = (capacity: number, amount: number): BucketSpec => ({
  capacity,
  refillAmount: amount,
  refillIntervalMs: MIN,
});

/** CRP's bucket per resource (`<Policy>Resource`), the documented table's. HighCostGet has none. */
export const CRP_PER_RESOURCE: Partial<Record<CrpReadPolicy | CrpWritePolicy, BucketSpec>> = {
  GetVMScaleSet: perMinute(36, 12),
  GetVMScaleSetVM: perMinute(36, 12),
  GetVM: perMinute(45, 15),
  CreateVMScaleSet: perMinute(12, 4),
  UpdateVMScaleSetVM: perMinute(12, 4),
};

/** CRP's per-minute subscription bucket (`<Policy>SubscriptionMaximum`) where no window is published. */
export const CRP_PER_SUBSCRIPTION: Partial<Record<CrpReadPolicy, BucketSpec>> = {
  GetVM: perMinute(15_000, 5_000),
  GetOperation: perMinute(15_000, 5_000),
};

/** NRP's limits per subscription and region (learn.microsoft.com request-limits-and-throttling, "Network throttling"). */
export const NRP_WINDOWS: Record<"reads" | "writes", WindowSpec> = {
  reads: { size: 10_000, windowMs: 5 * MIN },
  writes: { size: 1_000, windowMs: 5 * MIN },
};

/**
 * What a pacer plans on of a window: its size less a small reserve (the samples show counts three below the sizes;
 * a request in flight is counted by the server before its answer tells us).
 */
export function plannable(spec: WindowSpec): number {
  return spec.size - Math.max(3, Math.ceil(spec.size * 0.02));
}

/**
 * The share of each read window the timer's refresh may spend (a background read): the rest stays for the reconciles,
 * which read what they are about to write and cannot wait for the next window as the timer can.
 */
export const BACKGROUND_SHARE = 0.5;

/** The CRP policy of a window or bucket name in a header or a 429 (`Microsoft.Compute/GetVMScaleSet3Min` and the like). */
export function splitPolicyName(
  name: string,
): { policy: string; scope: "3Min" | "30Min" | "Resource" | "SubscriptionMaximum" } | undefined {
  const m = /^(?:Microsoft\.Compute\/)?([A-Za-z]+?)(3Min|30Min|Resource|SubscriptionMaximum)$/.exec(name.trim());
  if (!m) return undefined;
  return { policy: m[1] as string, scope: m[2] as "3Min" | "30Min" | "Resource" | "SubscriptionMaximum" };
}

/** The policy names of the published samples that mean one of ours (`PutVM` is an instance write's). */
const POLICY_ALIASES: Record<string, CrpReadPolicy | CrpWritePolicy> = {
  PutVM: "UpdateVMScaleSetVM",
  PutVMScaleSet: "CreateVMScaleSet",
  UpdateVMScaleSet: "CreateVMScaleSet",
  HighCostGet: "HighCostGetVMScaleSet",
};

/** One of the policies poolsync paces, as a header names it; undefined for any other. */
export function knownPolicy(policy: string): CrpReadPolicy | CrpWritePolicy | undefined {
  if (Object.prototype.hasOwnProperty.call(POLICY_ALIASES, policy)) return POLICY_ALIASES[policy];
  return Object.prototype.hasOwnProperty.call(CRP_WINDOWS, policy)
    ? (policy as CrpReadPolicy | CrpWritePolicy)
    : undefined;
}
