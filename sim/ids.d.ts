export declare const COMPUTE = "Microsoft.Compute";
export declare const VMSS_TYPE = "Microsoft.Compute/virtualMachineScaleSets";
export declare const VMSS_VM_TYPE = "Microsoft.Compute/virtualMachineScaleSets/virtualMachines";
export declare const LB_TYPE = "Microsoft.Network/loadBalancers";
export declare const VNET_TYPE = "Microsoft.Network/virtualNetworks";
export declare function canonical(id: string): string;
export declare function resourceGroupId(subscriptionId: string, resourceGroup: string): string;
export declare function scaleSetId(subscriptionId: string, resourceGroup: string, name: string): string;
export declare function instanceIdOf(scaleSetResourceId: string, instanceId: string): string;
export declare function loadBalancerId(subscriptionId: string, resourceGroup: string, name: string): string;
export declare function virtualNetworkId(subscriptionId: string, resourceGroup: string, name: string): string;
/** The parts of a path under /subscriptions/{s}/resourceGroups/{rg}/providers/{ns}/{type}/{name}/... */
export interface ParsedResourcePath {
    subscriptionId: string;
    resourceGroup?: string;
    /** Segments after `/providers/`, original casing. */
    providerSegments: string[];
}
export declare function parseResourcePath(path: string): ParsedResourcePath | undefined;
