import { describe, expect, it } from "vitest";
import { vmNicLines } from "../../src/cli/vmNicText";
import type { ScaleSetView } from "../../src/intake/observedState";
import type { VmNicsView } from "../../src/intake/vmNicState";

const RG = "/subscriptions/0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d/resourceGroups/flex"; // made up
const NIC = `${RG}/providers/Microsoft.Network/networkInterfaces/web-1-nic`;
const OURS = `${RG}/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/ours`;
const THEIRS = `${RG}/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/theirs`;

const view = (vms: VmNicsView[] | undefined, fields: Partial<ScaleSetView> = {}): ScaleSetView => ({
  scaleSetId: `${RG}/providers/Microsoft.Compute/virtualMachines/web-1`,
  cacheEnabled: true,
  model: { stale: false, cached: true },
  memberships: [],
  observedPools: [],
  ...(vms ? { vms } : {}),
  ...fields,
});

const vm: VmNicsView = {
  vmId: `${RG}/providers/Microsoft.Compute/virtualMachines/web-1/`,
  stale: false,
  nics: [
    {
      nicId: NIC,
      name: "front",
      primary: true,
      etag: 'W/"5"',
      stale: true,
      staleReason: "event: NIC written",
      ipConfigurations: [
        {
          name: "ipconfig1",
          backendPools: [
            { id: OURS, declared: true },
            { id: THEIRS, declared: false },
          ],
        },
        { name: "ipconfig2", backendPools: [] },
      ],
    },
  ],
};

describe("a VM's NICs in the terminal", () => {
  it("shows per NIC its marks and ETag, its full ID on a line to copy, and each ip configuration's pools, ours marked", () => {
    expect(vmNicLines(view([vm]))).toEqual([
      "  NICs (1 VM):",
      "    VM web-1",
      '      NIC front (primary; re-read next: event: NIC written)  ETag W/"5"',
      `        ${NIC}`,
      "        ipconfig1: ours, theirs (not declared here)",
      "        ipconfig2: no pool",
    ]);
  });

  it("marks a drift on the NIC it was seen on, whatever the ID's letter case", () => {
    const drift = {
      at: "2026-12-01T10:00:00.000Z",
      by: { name: "bob", id: "o", appId: "a" },
      operation: "write",
      correlationId: "",
      source: "event" as const,
      repairedAt: null,
      resourceKind: "nic",
      resourceId: NIC.toUpperCase(),
    };
    const lines = vmNicLines(
      view([vm], { memberships: [{ drift } as unknown as ScaleSetView["memberships"][number]] }),
    );
    expect(lines[2]).toContain("(primary; re-read next: event: NIC written; drift by bob, not repaired)");
  });

  it("says when no VM is cached yet or more are cached than shown, and shows nothing for a Uniform scale set", () => {
    expect(vmNicLines(view([]))).toEqual(["  NICs: no VM cached yet"]);
    expect(
      vmNicLines(view([vm, { ...vm, stale: true }], { vmsTruncated: true })).filter((l) => l.startsWith("    VM")),
    ).toEqual(["    VM web-1", "    VM web-1 (re-read next: marked)"]);
    expect(vmNicLines(view([vm, vm], { vmsTruncated: true }))[0]).toBe("  NICs (2 VMs, more not shown):");
    expect(vmNicLines(view(undefined))).toEqual([]);
  });
});
