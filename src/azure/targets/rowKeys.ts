import { declarationKey, type Declaration } from "../../core/declarations";
import type { NicRef, TargetRef, VmRef } from "../../core/resourceIds";
import { encodeKey } from "../../core/tableKeys";

/**
 * Where a target's rows live: one partition per target (its encoded key, as the memberships table always keyed it),
 * one row per thing, each kind under a prefix of its own so that what a pass needs is one range:
 *
 *   "!control"           the control row: lease, declare window, debounce, attempts, counts, writes in doubt
 *   "%2F…"               declarations, under the key every earlier version stored them with (upgrades find them)
 *   "c|model"            the scale set model's cache row
 *   "c|i|<instanceId>"   an instance's cache row
 *   "c|n|<nic key>"      a NIC's cache row (a VM target's, or a Flexible scale set VM's)
 *   "c|v|<vm key>"       a VM's cache row
 *   "d|<declaration>"    the last drift of a declaration
 *   "g|<pool key>"       the addresses the target added to an Application Gateway pool (issue 43)
 *   "h|<time>|<random>"  history, newest first
 *   "w|<resource key>"   the last foreign writer seen on a resource
 *
 * "!" < "%" < "c" < "d" < "g" < "h" < "w": a pass reads `RowKey lt "d"` (control, declarations, cache) in one query.
 */

export const targetPartition = (target: TargetRef) => encodeKey(target.key);

export const CONTROL_ROW = "!control";

/** The key a declaration row has always had: its pool and ip configuration, encoded. */
export const declarationRowKey = (d: Pick<Declaration, "backendPoolId" | "ipConfiguration" | "ipVersion">) =>
  encodeKey(declarationKey(d));
export const DECLARATION_ROWS = { from: "%", to: "&" } as const;

export const MODEL_ROW = "c|model";
export const instanceRowKey = (instanceId: string) => `c|i|${instanceId}`;
export const nicRowKey = (nic: NicRef) => `c|n|${encodeKey(nic.key)}`;
export const vmRowKey = (vm: VmRef) => `c|v|${encodeKey(vm.key)}`;
export const CACHE_ROWS = { from: "c|", to: "c}" } as const;

export const driftRowKey = (declKey: string) => `d|${encodeKey(declKey)}`;
export const DRIFT_ROWS = { from: "d|", to: "d}" } as const;

export const gatewayClaimsRowKey = (poolKey: string) => `g|${encodeKey(poolKey.toLowerCase())}`;

/** The largest time a history key holds: keys sort newest first. */
const MAX_TIME = 9_999_999_999_999;
export const historyRowKey = (at: number, random: string) =>
  `h|${String(MAX_TIME - Math.min(Math.max(0, at), MAX_TIME)).padStart(13, "0")}|${random}`;
export const historyTimeOf = (rowKey: string) => MAX_TIME - Number(rowKey.slice(2, 15));
export const HISTORY_ROWS = { from: "h|", to: "h}" } as const;

export const writerRowKey = (resourceId: string) => `w|${encodeKey(resourceId.toLowerCase())}`;

/** What a pass reads in one query: the control row, the declarations and the cache rows. */
export const PASS_ROWS_BEFORE = "d";
