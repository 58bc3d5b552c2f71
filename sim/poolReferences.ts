// Who is in a pool that ip configurations join by reference: load balancer backend pools
// (`loadBalancerBackendAddressPools`), inbound NAT pools (`loadBalancerInboundNatPools`, scale sets only) and application
// gateway backend pools (`applicationGatewayBackendAddressPools`). The RP derives the member list from the ip
// configurations that reference the pool: a scale set instance's once its write's operation has ended, a NIC
// resource's at once.
import { canonical } from "./ids";
import type { JsonObject } from "./json";
import { nicIpConfigs } from "./nics";
import { referencedIds, type PoolReferenceField } from "./poolReferenceIds";
import { instanceNicConfigs, ipConfigurations, modelNicConfigs } from "./scaleSets";
import type { SimState } from "./state";

/** One ip configuration that references a pool; `instanceId` when it is a Uniform scale set instance's. */
export interface PoolReference {
  id: string;
  instanceId?: string;
}

function refersTo(ipc: JsonObject, field: PoolReferenceField, key: string): boolean {
  return referencedIds(ipc, field).some((p) => canonical(p) === key);
}

/** The ip configurations referencing `targetId` through `field`: scale set instances' in scale set and instance
 *  order, then NIC resources' (Flexible scale sets' VMs and standalone VMs). */
export function referencingIpConfigurations(
  state: SimState,
  targetId: string,
  field: PoolReferenceField,
): PoolReference[] {
  const key = canonical(targetId);
  const out: PoolReference[] = [];
  for (const ss of state.scaleSets.values()) {
    for (const inst of ss.instances.values()) {
      for (const { nic, name, ipc } of ipConfigurations(inst.memberNics ?? instanceNicConfigs(inst))) {
        if (refersTo(ipc, field, key))
          out.push({ id: `${inst.id}/networkInterfaces/${nic}/ipConfigurations/${name}`, instanceId: inst.instanceId });
      }
    }
  }
  for (const nic of state.nics.values()) {
    for (const { name, ipc } of ipConfigurations([
      { name: nic.name, properties: { ipConfigurations: nicIpConfigs(nic.body) } },
    ])) {
      if (refersTo(ipc, field, key)) out.push({ id: `${nic.id}/ipConfigurations/${name}` });
    }
  }
  return out;
}

/** True when anything references the target: a member ip configuration, or a scale set model (whose future
 *  instances would join). What NRP refuses to delete, and what makes a pool NIC-based. */
export function isReferenced(state: SimState, targetId: string, field: PoolReferenceField): boolean {
  const key = canonical(targetId);
  for (const ss of state.scaleSets.values()) {
    if (ipConfigurations(modelNicConfigs(ss.body)).some(({ ipc }) => refersTo(ipc, field, key))) return true;
  }
  return referencingIpConfigurations(state, targetId, field).length > 0;
}
