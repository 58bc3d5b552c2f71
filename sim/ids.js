"use strict";
// ARM resource IDs are case-insensitive: the simulator keys everything by the lower-cased ID and answers the ID in the
// casing the resource was created with.
Object.defineProperty(exports, "__esModule", { value: true });
exports.VNET_TYPE = exports.LB_TYPE = exports.VMSS_VM_TYPE = exports.VMSS_TYPE = exports.COMPUTE = void 0;
exports.canonical = canonical;
exports.resourceGroupId = resourceGroupId;
exports.scaleSetId = scaleSetId;
exports.instanceIdOf = instanceIdOf;
exports.loadBalancerId = loadBalancerId;
exports.virtualNetworkId = virtualNetworkId;
exports.parseResourcePath = parseResourcePath;
exports.COMPUTE = "Microsoft.Compute";
exports.VMSS_TYPE = "Microsoft.Compute/virtualMachineScaleSets";
exports.VMSS_VM_TYPE = "Microsoft.Compute/virtualMachineScaleSets/virtualMachines";
exports.LB_TYPE = "Microsoft.Network/loadBalancers";
exports.VNET_TYPE = "Microsoft.Network/virtualNetworks";
function canonical(id) {
    return id.replace(/\/+$/, "").toLowerCase();
}
function resourceGroupId(subscriptionId, resourceGroup) {
    return `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}`;
}
function scaleSetId(subscriptionId, resourceGroup, name) {
    return `${resourceGroupId(subscriptionId, resourceGroup)}/providers/${exports.VMSS_TYPE}/${name}`;
}
function instanceIdOf(scaleSetResourceId, instanceId) {
    return `${scaleSetResourceId}/virtualMachines/${instanceId}`;
}
function loadBalancerId(subscriptionId, resourceGroup, name) {
    return `${resourceGroupId(subscriptionId, resourceGroup)}/providers/${exports.LB_TYPE}/${name}`;
}
function virtualNetworkId(subscriptionId, resourceGroup, name) {
    return `${resourceGroupId(subscriptionId, resourceGroup)}/providers/${exports.VNET_TYPE}/${name}`;
}
function parseResourcePath(path) {
    const segs = path.split("/").filter((s) => s.length > 0).map(decodeURIComponent);
    if (segs[0]?.toLowerCase() !== "subscriptions" || segs[1] === undefined)
        return undefined;
    const subscriptionId = segs[1];
    let i = 2;
    let resourceGroup;
    if (segs[i]?.toLowerCase() === "resourcegroups") {
        resourceGroup = segs[i + 1];
        if (resourceGroup === undefined)
            return undefined;
        i += 2;
    }
    if (i === segs.length)
        return { subscriptionId, ...(resourceGroup !== undefined ? { resourceGroup } : {}), providerSegments: [] };
    if (segs[i]?.toLowerCase() !== "providers")
        return undefined;
    return { subscriptionId, ...(resourceGroup !== undefined ? { resourceGroup } : {}), providerSegments: segs.slice(i + 1) };
}
//# sourceMappingURL=ids.js.map