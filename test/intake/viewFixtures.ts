import type { StoredDeclaration } from "../../src/core/declarations";
import type { Drift } from "../../src/core/drift";
import type { InstanceModel, NicModel, ScaleSetModel, VmModel } from "../../src/core/models";
import type { NicConfiguration } from "../../src/core/networkProfile";
import type { CachedEntry, CachedVmNics } from "../../src/core/ports";

/**
 * Made-up IDs, declarations and cache rows for the unit tests of the status views (src/intake's observedState,
 * vmNicState, driftView and their HTML), which read only what the reconcile stored: declarations and cache rows.
 */

const RG = "/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/web/providers";
export const VMSS = `${RG}/Microsoft.Compute/virtualMachineScaleSets/web`;
export const VM = `${RG}/Microsoft.Compute/virtualMachines/vm-1`;
export const POOL_A = `${RG}/Microsoft.Network/loadBalancers/lb/backendAddressPools/a`;
export const POOL_B = `${RG}/Microsoft.Network/loadBalancers/lb/backendAddressPools/b`;
/** Another writer's pool, which no declaration names. */
export const POOL_OTHER = `${RG}/Microsoft.Network/loadBalancers/lb/backendAddressPools/someone-else`;
export const nicId = (name: string) => `${RG}/Microsoft.Network/networkInterfaces/${name}`;

/** Another writer's change that undid a membership, seen by its event and not repaired yet. */
export const DRIFT: Drift = {
  at: "2026-12-02T09:30:00.000Z",
  by: { name: "ops-script", id: "oid-ops", appId: "app-ops" },
  operation: "Microsoft.Network/networkInterfaces/write",
  correlationId: "corr-1",
  source: "event",
  repairedAt: undefined,
  resourceKind: "nic",
  resourceId: nicId("vm-1-nic"),
};

export const NOW = Date.parse("2026-12-02T10:00:00Z");
export const TTL_MS = 300_000;
export const OPTIONS = { now: NOW, ttlMs: TTL_MS, cacheEnabled: true };

export function stored(over: Partial<StoredDeclaration> = {}): StoredDeclaration {
  return {
    scaleSetId: VMSS,
    backendPoolId: POOL_A,
    ipConfiguration: "",
    state: "present",
    declaredAt: "2026-12-02T09:00:00.000Z",
    requestId: "req-1",
    declaredBy: { id: "oid-alice", name: "Alice", via: "entra" },
    outcome: { kind: "applied", at: "2026-12-02T09:01:00.000Z" },
    attempts: 1,
    rowEtag: 'W/"1"',
    ...over,
  };
}

/** A cache row read a minute ago, fresh unless `over` says otherwise. */
export function cached<M>(model: M | undefined, over: Partial<CachedEntry<M>> = {}): CachedEntry<M> {
  return {
    model,
    readAt: NOW - 60_000,
    stale: false,
    staleReason: undefined,
    ourClientRequestId: undefined,
    pendingClientRequestId: undefined,
    rowEtag: 'W/"r"',
    ...over,
  } as CachedEntry<M>;
}

/** One primary NIC configuration whose primary ip configuration references `pools`. */
export function nicsWith(pools: string[], name = "nic0"): NicConfiguration[] {
  return [
    {
      name,
      primary: true,
      ipConfigurations: [
        { name: "ipconfig1", primary: true, loadBalancerBackendAddressPools: pools.map((id) => ({ id })) },
      ],
    },
  ];
}

export function scaleSetModel(pools: string[], over: Partial<ScaleSetModel> = {}): ScaleSetModel {
  return {
    id: VMSS,
    etag: '"m1"',
    location: "westeurope",
    provisioningState: "Succeeded",
    capacity: 2,
    nics: nicsWith(pools),
    ...over,
  };
}

export function instanceModel(instanceId: string, pools: string[]): InstanceModel {
  return {
    id: `${VMSS}/virtualMachines/${instanceId}`,
    instanceId,
    etag: `"i${instanceId}"`,
    location: "westeurope",
    provisioningState: "Succeeded",
    nics: nicsWith(pools),
  };
}

/** A standalone VM with one NIC per entry of `nics` (the first primary), each NIC's pools as given. */
export function cachedVm(vmId: string, nics: Array<{ name: string; pools: string[] | undefined }>): CachedVmNics {
  const vm: VmModel = {
    id: vmId,
    etag: '"vm"',
    provisioningState: "Succeeded",
    scaleSetId: undefined,
    nicIds: nics.map((n) => nicId(n.name)),
    primaryNicId: nics[0] ? nicId(nics[0].name) : undefined,
  };
  return {
    vm: cached(vm),
    nics: nics.map((n) => {
      const model: NicModel | undefined = n.pools
        ? { id: nicId(n.name), etag: `"${n.name}"`, provisioningState: "Succeeded", nic: nicsWith(n.pools, n.name)[0]! }
        : undefined;
      return { id: nicId(n.name), entry: model ? cached(model) : undefined };
    }),
  };
}
