import { describe, expect, it } from "vitest";
import {
  CACHE_ROWS,
  CONTROL_ROW,
  declarationRowKey,
  DRIFT_ROWS,
  driftRowKey,
  gatewayClaimsRowKey,
  HISTORY_ROWS,
  historyRowKey,
  historyTimeOf,
  instanceRowKey,
  MODEL_ROW,
  nicRowKey,
  PASS_ROWS_BEFORE,
  vmRowKey,
  writerRowKey,
} from "../../../src/azure/targets/rowKeys";
import { parseVmId } from "../../../src/core/resourceIds";
import { encodeKey } from "../../../src/core/tableKeys";
import { nicRefOf } from "../../support/refs";

const RG = "/subscriptions/00000000-aaaa-4bbb-8ccc-000000000459/resourceGroups/rg/providers";
const POOL = `${RG}/Microsoft.Network/loadBalancers/lb/backendAddressPools/pool`;
const nic = nicRefOf(`${RG}/Microsoft.Network/networkInterfaces/nic-0`);
const vm = parseVmId(`${RG}/Microsoft.Compute/virtualMachines/vm-0`);
const inRange = (key: string, r: { from: string; to: string }) => key >= r.from && key < r.to;

describe("rowKeys", () => {
  it("puts control, declarations and cache rows before the pass's bound, and drift, claims, history, writers after", () => {
    const decl = declarationRowKey({ backendPoolId: POOL, ipConfiguration: "" });
    const cache = [MODEL_ROW, instanceRowKey("7"), nicRowKey(nic), ...(vm.ok ? [vmRowKey(vm.value)] : [])];
    for (const k of [CONTROL_ROW, decl, ...cache]) expect(k < PASS_ROWS_BEFORE).toBe(true);
    expect(inRange(driftRowKey("k"), DRIFT_ROWS)).toBe(true);
    for (const k of [driftRowKey("k"), gatewayClaimsRowKey(POOL), historyRowKey(0, "r"), writerRowKey(POOL)])
      expect(k >= PASS_ROWS_BEFORE).toBe(true);
    for (const k of cache) expect(inRange(k, CACHE_ROWS)).toBe(true);
    expect(inRange(decl, CACHE_ROWS)).toBe(false);
  });

  it("keys a declaration as every earlier version stored it: its pool and ip configuration, encoded", () => {
    expect(declarationRowKey({ backendPoolId: POOL, ipConfiguration: "ipconfig1" })).toBe(
      encodeKey(`${POOL.toLowerCase()}|ipconfig1`),
    );
  });

  it("sorts history newest first and gives each row's time back, out-of-range times clamped", () => {
    const older = historyRowKey(1_000, "a");
    const newer = historyRowKey(2_000, "a");
    expect(newer < older).toBe(true);
    expect(historyTimeOf(newer)).toBe(2_000);
    expect(historyTimeOf(historyRowKey(-5, "a"))).toBe(0);
    expect(inRange(newer, HISTORY_ROWS)).toBe(true);
  });

  it("keys a resource's rows whatever the letter case of its ID", () => {
    expect(writerRowKey(POOL.toUpperCase())).toBe(writerRowKey(POOL));
    expect(gatewayClaimsRowKey(POOL.toUpperCase())).toBe(gatewayClaimsRowKey(POOL));
  });
});
