import { describe, expect, it } from "vitest";
import { toIntent, type StoredDeclaration } from "../../src/core/declarations";
import { callerOf } from "../../src/core/eventCaller";
import { driftOf, findDrift, UNKNOWN_WRITER, type ObservedResource } from "../../src/core/drift";

const RG = "/subscriptions/00000000-0000-0000-0000-00000000000a/resourceGroups/rg/providers";
const POOL = `${RG}/Microsoft.Network/loadBalancers/lb/backendAddressPools/a`;
const VM = `${RG}/Microsoft.Compute/virtualMachines/vm-0`;
const NIC0 = `${RG}/Microsoft.Network/networkInterfaces/vm-0-nic0`;
const NIC1 = `${RG}/Microsoft.Network/networkInterfaces/vm-0-nic1`;

const declared = (
  state: "present" | "absent",
  outcome: StoredDeclaration["outcome"]["kind"],
  ipConfiguration = "",
): StoredDeclaration => ({
  scaleSetId: VM,
  backendPoolId: POOL,
  ipConfiguration,
  state,
  declaredAt: "2026-12-04T10:00:00.000Z",
  requestId: "r1",
  declaredBy: { id: "u", name: "u", via: "entra" },
  outcome: { kind: outcome, at: "2026-12-04T10:00:05.000Z" },
  attempts: 0,
  rowEtag: "e",
});
const nic = (name: string, primary: boolean, pools: string[]) => ({
  name,
  primary,
  ipConfigurations: [
    { name: "ipConfig0", primary: true, loadBalancerBackendAddressPools: pools.map((id) => ({ id })) },
  ],
});
const vmNics = (nic0: string[], nic1: string[]): ObservedResource => ({
  kind: "nic",
  ids: [NIC0, NIC1],
  nics: [nic("nic0", false, nic0), nic("nic1", true, nic1)],
});

describe("findDrift", () => {
  it("an applied declaration missing from the NIC its selector picks: drift on that NIC, not the VM's first", () => {
    const d = declared("present", "applied");
    expect(findDrift([d], [toIntent(d)], [vmNics([], [])])).toEqual([
      { declaration: d, resourceKind: "nic", resourceId: NIC1 },
    ]);
  });

  it("a removed pool that is back is drift too", () => {
    const d = declared("absent", "applied");
    expect(
      findDrift([d], [toIntent(d)], [{ kind: "model", ids: ["/m"], nics: [nic("nic", true, [POOL])] }]),
    ).toHaveLength(1);
  });

  it("is no drift when poolsync had not applied it yet (pending, failed), or when it still holds", () => {
    const pending = declared("present", "pending");
    const failed = declared("present", "failed");
    const held = declared("present", "applied");
    expect(findDrift([pending, failed], [toIntent(pending), toIntent(failed)], [vmNics([], [])])).toEqual([]);
    expect(findDrift([held], [toIntent(held)], [vmNics([], [POOL])])).toEqual([]);
  });
});

describe("driftOf", () => {
  const finding = { declaration: declared("present", "applied"), resourceKind: "nic" as const, resourceId: NIC1 };
  const caller = callerOf(
    {
      claims: {
        name: "cluster-autoscaler",
        "http://schemas.microsoft.com/identity/claims/objectidentifier": "oid-1",
        appid: "app-1",
      },
      authorization: { action: "Microsoft.Network/networkInterfaces/write" },
      correlationId: "corr-1",
    },
    "ev-1",
    "2026-12-04T10:01:00Z",
  );

  it("names the writer whose event came after the declaration was applied", () => {
    const d = driftOf(
      finding,
      { ...caller, seenAt: Date.parse("2026-12-04T10:01:00Z") },
      Date.parse("2026-12-04T10:01:02Z"),
    );
    expect(d).toEqual({
      at: "2026-12-04T10:01:02.000Z",
      by: { name: "cluster-autoscaler", id: "oid-1", appId: "app-1" },
      operation: "Microsoft.Network/networkInterfaces/write",
      correlationId: "corr-1",
      source: "event",
      repairedAt: undefined,
      resourceKind: "nic",
      resourceId: NIC1,
    });
  });

  it("a write seen before poolsync applied the declaration did not undo it: found by the timer, writer unknown", () => {
    const d = driftOf(
      finding,
      { ...caller, seenAt: Date.parse("2026-12-04T09:59:00Z") },
      Date.parse("2026-12-04T10:05:00Z"),
    );
    expect(d).toMatchObject({ by: UNKNOWN_WRITER, source: "timer", operation: "unknown" });
    expect(driftOf(finding, undefined, Date.parse("2026-12-04T10:05:00Z"))).toMatchObject({
      by: UNKNOWN_WRITER,
      source: "timer",
    });
  });
});
