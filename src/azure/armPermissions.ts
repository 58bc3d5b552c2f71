/**
 * Every Azure RBAC action the Compute edge needs on a target scope (a subscription or resource group in
 * POOLSYNC_SCOPES), and nothing more. infra/access.json grants exactly this list as a custom role on each target scope;
 * test/infra checks the two stay equal. Add an action here in the same change that adds the ARM call needing it.
 */
export const REQUIRED_ARM_ACTIONS_WITH_REASONS = [
  ["Microsoft.Compute/virtualMachineScaleSets/read", "GET the scale set model and its ETag before computing a membership change."],
  ["Microsoft.Compute/virtualMachineScaleSets/write", "PUT/PATCH the scale set's network profile with If-Match (pool references only)."],
  ["Microsoft.Compute/virtualMachineScaleSets/virtualMachines/read", "GET one instance with its ETag, and list a scale set's instances."],
  ["Microsoft.Compute/virtualMachineScaleSets/virtualMachines/write", "PUT an instance's networkProfileConfiguration with If-Match."],
  ["Microsoft.Compute/locations/operations/read", "Poll the Azure-AsyncOperation URL of a long-running scale set / instance write."],
  ["Microsoft.Network/loadBalancers/read", "Read the load balancer to check a declared backend pool exists."],
  ["Microsoft.Network/loadBalancers/backendAddressPools/join/action", "Linked-access check: an ip config that references a backend pool joins it."],
  ["Microsoft.Network/virtualNetworks/subnets/join/action", "Linked-access check: a NIC configuration write re-submits its subnet reference."],
] as const satisfies readonly (readonly [string, string])[];

/** The actions alone, in the order above. */
export const REQUIRED_ARM_ACTIONS: readonly string[] = REQUIRED_ARM_ACTIONS_WITH_REASONS.map(([action]) => action);
