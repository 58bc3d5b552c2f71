import type { JsonObject } from "./";

/** Readers and writers of the simulator's stored resources in ARM's wire shape, for assertions and other writers. */

type Nic = {
  name: string;
  properties: {
    ipConfigurations: Array<{
      name: string;
      properties: { loadBalancerBackendAddressPools?: Array<{ id: string }>; [k: string]: unknown };
    }>;
  };
};

export function modelNics(vmss: JsonObject): Nic[] {
  return (
    (vmss.properties as JsonObject).virtualMachineProfile as {
      networkProfile: { networkInterfaceConfigurations: Nic[] };
    }
  ).networkProfile.networkInterfaceConfigurations;
}

export function instanceNics(vm: JsonObject): Nic[] {
  return ((vm.properties as JsonObject).networkProfileConfiguration as { networkInterfaceConfigurations: Nic[] })
    .networkInterfaceConfigurations;
}

/** "ipConfig0 → [pools]" for every ip configuration of the first NIC. */
export function poolsByIpConfig(nics: Nic[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const c of nics[0]?.properties.ipConfigurations ?? [])
    out[c.name] = (c.properties.loadBalancerBackendAddressPools ?? []).map((p) => p.id.toLowerCase());
  return out;
}

/** What another writer (cluster tooling, a person with curl) does: adds its own ip configuration to the first NIC. */
export function addIpConfig(name: string, subnetId: string) {
  return (resource: JsonObject) => {
    const props = resource.properties as JsonObject;
    const nics = (props.virtualMachineProfile ? modelNics(resource) : instanceNics(resource)) as Nic[];
    nics[0]!.properties.ipConfigurations.push({
      name,
      properties: { primary: false, privateIPAddressVersion: "IPv4", subnet: { id: subnetId } },
    });
  };
}

/** Another writer that removes a pool reference from every ip configuration (someone else's change that drops ours). */
export function dropPool(poolId: string) {
  return (resource: JsonObject) => {
    const props = resource.properties as JsonObject;
    const nics = (props.virtualMachineProfile ? modelNics(resource) : instanceNics(resource)) as Nic[];
    for (const n of nics)
      for (const c of n.properties.ipConfigurations) {
        c.properties.loadBalancerBackendAddressPools = (c.properties.loadBalancerBackendAddressPools ?? []).filter(
          (p) => p.id.toLowerCase() !== poolId.toLowerCase(),
        );
      }
  };
}

type NicResource = {
  properties: {
    ipConfigurations: Array<{
      name: string;
      properties: {
        privateIPAddressVersion?: string;
        loadBalancerBackendAddressPools?: Array<{ id: string }>;
        [k: string]: unknown;
      };
    }>;
  };
};

/** "ipConfig0 → [pools]" for every ip configuration of a NIC resource (Network RP shape). */
export function nicPoolsByIpConfig(nic: JsonObject): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const c of (nic as unknown as NicResource).properties.ipConfigurations)
    out[c.name] = (c.properties.loadBalancerBackendAddressPools ?? []).map((p) => p.id.toLowerCase());
  return out;
}

/**
 * Another writer that read the NIC earlier and now PUTs its copy whole, without If-Match, after its own change:
 * whatever was written since its read is gone (Network RP replaces the NIC whole).
 */
export function stalePut(stale: JsonObject, change: (nic: JsonObject) => void) {
  return (resource: JsonObject) => {
    for (const k of Object.keys(resource)) delete resource[k];
    Object.assign(resource, structuredClone(stale));
    change(resource);
  };
}

/** Another writer's own pool on one of a NIC resource's ip configurations. */
export function addNicPool(ipConfiguration: string, poolId: string) {
  return (nic: JsonObject) => {
    const c = (nic as unknown as NicResource).properties.ipConfigurations.find((x) => x.name === ipConfiguration);
    if (!c) throw new Error(`no ip configuration ${ipConfiguration}`);
    c.properties.loadBalancerBackendAddressPools = [
      ...(c.properties.loadBalancerBackendAddressPools ?? []),
      { id: poolId },
    ];
  };
}
