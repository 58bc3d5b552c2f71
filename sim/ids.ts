// ARM resource IDs are case-insensitive: the simulator keys everything by the lower-cased ID and answers the ID in the
// casing the resource was created with.

export const COMPUTE = "Microsoft.Compute";
export const VMSS_TYPE = "Microsoft.Compute/virtualMachineScaleSets";
export const VMSS_VM_TYPE = "Microsoft.Compute/virtualMachineScaleSets/virtualMachines";
export const LB_TYPE = "Microsoft.Network/loadBalancers";
export const VNET_TYPE = "Microsoft.Network/virtualNetworks";
export const NIC_TYPE = "Microsoft.Network/networkInterfaces";
export const VM_TYPE = "Microsoft.Compute/virtualMachines";
export const AGW_TYPE = "Microsoft.Network/applicationGateways";

export function canonical(id: string): string {
  return id.replace(/\/+$/, "").toLowerCase();
}

export function resourceGroupId(subscriptionId: string, resourceGroup: string): string {
  return `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}`;
}

export function scaleSetId(subscriptionId: string, resourceGroup: string, name: string): string {
  return `${resourceGroupId(subscriptionId, resourceGroup)}/providers/${VMSS_TYPE}/${name}`;
}

export function instanceIdOf(scaleSetResourceId: string, instanceId: string): string {
  return `${scaleSetResourceId}/virtualMachines/${instanceId}`;
}

export function loadBalancerId(subscriptionId: string, resourceGroup: string, name: string): string {
  return `${resourceGroupId(subscriptionId, resourceGroup)}/providers/${LB_TYPE}/${name}`;
}

export function virtualNetworkId(subscriptionId: string, resourceGroup: string, name: string): string {
  return `${resourceGroupId(subscriptionId, resourceGroup)}/providers/${VNET_TYPE}/${name}`;
}

/** The parts of a path under /subscriptions/{s}/resourceGroups/{rg}/providers/{ns}/{type}/{name}/... */
export interface ParsedResourcePath {
  subscriptionId: string;
  resourceGroup?: string;
  /** Segments after `/providers/`, original casing. */
  providerSegments: string[];
}

export function parseResourcePath(path: string): ParsedResourcePath | undefined {
  const segs = path
    .split("/")
    .filter((s) => s.length > 0)
    .map(decodeURIComponent);
  if (segs[0]?.toLowerCase() !== "subscriptions" || segs[1] === undefined) return undefined;
  const subscriptionId = segs[1];
  let i = 2;
  let resourceGroup: string | undefined;
  if (segs[i]?.toLowerCase() === "resourcegroups") {
    resourceGroup = segs[i + 1];
    if (resourceGroup === undefined) return undefined;
    i += 2;
  }
  if (i === segs.length)
    return { subscriptionId, ...(resourceGroup !== undefined ? { resourceGroup } : {}), providerSegments: [] };
  if (segs[i]?.toLowerCase() !== "providers") return undefined;
  return {
    subscriptionId,
    ...(resourceGroup !== undefined ? { resourceGroup } : {}),
    providerSegments: segs.slice(i + 1),
  };
}

export function networkInterfaceId(subscriptionId: string, resourceGroup: string, name: string): string {
  return `${resourceGroupId(subscriptionId, resourceGroup)}/providers/${NIC_TYPE}/${name}`;
}

export function virtualMachineId(subscriptionId: string, resourceGroup: string, name: string): string {
  return `${resourceGroupId(subscriptionId, resourceGroup)}/providers/${VM_TYPE}/${name}`;
}

export function applicationGatewayId(subscriptionId: string, resourceGroup: string, name: string): string {
  return `${resourceGroupId(subscriptionId, resourceGroup)}/providers/${AGW_TYPE}/${name}`;
}
