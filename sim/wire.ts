import type { JsonObject } from "./";

/** Readers and writers of the simulator's stored resources in ARM's wire shape, for assertions and other writers. */

type Nic = { name: string; properties: { ipConfigurations: Array<{ name: string; properties: { loadBalancerBackendAddressPools?: Array<{ id: string }>; [k: string]: unknown } }> } };

export function modelNics(vmss: JsonObject): Nic[] {
  return ((vmss.properties as JsonObject).virtualMachineProfile as { networkProfile: { networkInterfaceConfigurations: Nic[] } }).networkProfile.networkInterfaceConfigurations;
}

export function instanceNics(vm: JsonObject): Nic[] {
  return ((vm.properties as JsonObject).networkProfileConfiguration as { networkInterfaceConfigurations: Nic[] }).networkInterfaceConfigurations;
}

/** "ipConfig0 → [pools]" for every ip configuration of the first NIC. */
export function poolsByIpConfig(nics: Nic[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const c of nics[0]?.properties.ipConfigurations ?? []) out[c.name] = (c.properties.loadBalancerBackendAddressPools ?? []).map((p) => p.id.toLowerCase());
  return out;
}

/** What another writer (cluster tooling, a person with curl) does: adds its own ip configuration to the first NIC. */
export function addIpConfig(name: string, subnetId: string) {
  return (resource: JsonObject) => {
    const props = resource.properties as JsonObject;
    const nics = (props.virtualMachineProfile ? modelNics(resource) : instanceNics(resource)) as Nic[];
    nics[0]!.properties.ipConfigurations.push({ name, properties: { primary: false, privateIPAddressVersion: "IPv4", subnet: { id: subnetId } } });
  };
}

/** Another writer that removes a pool reference from every ip configuration (someone else's change that drops ours). */
export function dropPool(poolId: string) {
  return (resource: JsonObject) => {
    const props = resource.properties as JsonObject;
    const nics = (props.virtualMachineProfile ? modelNics(resource) : instanceNics(resource)) as Nic[];
    for (const n of nics) for (const c of n.properties.ipConfigurations) {
      c.properties.loadBalancerBackendAddressPools = (c.properties.loadBalancerBackendAddressPools ?? []).filter((p) => p.id.toLowerCase() !== poolId.toLowerCase());
    }
  };
}
