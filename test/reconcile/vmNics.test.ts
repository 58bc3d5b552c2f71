import { describe, expect, it } from "vitest";
import { RefusedError } from "../../src/core/errors";
import type { CachedEntry } from "../../src/core/ports";
import type { VmModel } from "../../src/core/models";
import { parseScope } from "../../src/core/scopes";
import { checkedNicRefs, usable } from "../../src/reconcile/vmNics";

/**
 * What a VM's NIC pass trusts before any GET or PUT: the NIC IDs ARM's VM model names, and a cache row (pure).
 * The writes themselves go over the simulator in reconcileVm's and the Flexible suites' tests.
 */
const SUB = "00000000-0000-0000-0000-0000000000bd";
const RG = `/subscriptions/${SUB}/resourceGroups/rg`;
const nic = (rg: string, name: string, sub = SUB) =>
  `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.Network/networkInterfaces/${name}`;
const vm = (nicIds: string[]): VmModel => ({
  id: `${RG}/providers/Microsoft.Compute/virtualMachines/vm-n`,
  etag: "W/1",
  provisioningState: "Succeeded",
  scaleSetId: undefined,
  nicIds,
  primaryNicId: nicIds[0],
});
const scope = parseScope(RG);
if (!scope.ok) throw new Error(scope.reason);
const scopes = [scope.value];

describe("checkedNicRefs", () => {
  it("gives the VM's NICs inside POOLSYNC_SCOPES as refs", () => {
    expect(checkedNicRefs(vm([nic("rg", "a"), nic("RG", "b")]), scopes).map((r) => r.name)).toEqual(["a", "b"]);
  });

  it("refuses the whole target for a NIC outside the scopes or the VM's subscription, naming it", () => {
    const outside = nic("other-rg", "x");
    expect(() => checkedNicRefs(vm([nic("rg", "a"), outside]), scopes)).toThrow(RefusedError);
    expect(() => checkedNicRefs(vm([outside]), scopes)).toThrow(`NIC ${outside} of`);
    const foreign = nic("rg", "y", "00000000-0000-0000-0000-0000000000be");
    const wide = parseScope("/subscriptions/00000000-0000-0000-0000-0000000000be");
    if (!wide.ok) throw new Error(wide.reason);
    expect(() => checkedNicRefs(vm([foreign]), [...scopes, wide.value])).toThrow(/VM's subscription/);
  });

  it("refuses a NIC ID that is not one", () => {
    expect(() => checkedNicRefs(vm([`${RG}/providers/Microsoft.Network/publicIPAddresses/pip`]), scopes)).toThrow(
      RefusedError,
    );
  });
});

describe("usable", () => {
  const entry = (extra: Partial<CachedEntry<unknown>> = {}): CachedEntry<unknown> => ({
    model: {},
    readAt: 1_000,
    stale: false,
    staleReason: undefined,
    ourClientRequestId: undefined,
    pendingClientRequestId: undefined,
    rowEtag: "W/row",
    ...extra,
  });

  it("trusts a row only while it holds a model, is not stale and is younger than the TTL", () => {
    expect(usable(entry(), 1_999, 1_000)).toBe(true);
    expect(usable(entry(), 2_000, 1_000)).toBe(false);
    expect(usable(entry({ stale: true }), 1_000, 1_000)).toBe(false);
    expect(usable(entry({ model: undefined }), 1_000, 1_000)).toBe(false);
    expect(usable(undefined, 1_000, 1_000)).toBe(false);
  });
});
