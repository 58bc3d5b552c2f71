/**
 * Every Azure RBAC action the Compute edge may need on a target scope (a subscription or resource group in
 * POOLSYNC_SCOPES), and nothing more. infra/access.json grants the scale set actions and, as a parameter, the joins:
 * by default the two every scale set needs (backend pools, subnets), the others only where the scale sets' NIC
 * configurations reference such a resource; test/infra checks the two stay equal. Add an action here in the same
 * change that adds the ARM call needing it.
 */
export const REQUIRED_ARM_ACTIONS_WITH_REASONS = [
  [
    "Microsoft.Compute/virtualMachineScaleSets/read",
    "GET the scale set model and its ETag before computing a membership change.",
  ],
  [
    "Microsoft.Compute/virtualMachineScaleSets/write",
    "PUT/PATCH the scale set's network profile with If-Match (pool references only).",
  ],
  [
    "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/read",
    "GET one instance with its ETag, and list a scale set's instances.",
  ],
  [
    "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/write",
    "PUT an instance's networkProfileConfiguration with If-Match.",
  ],
  [
    "Microsoft.Compute/locations/operations/read",
    "Poll the Azure-AsyncOperation URL of a long-running scale set / instance write.",
  ],
  [
    "Microsoft.Compute/virtualMachines/read",
    "List a resource group's VMs to find a Flexible scale set's VMs; GET a declared VM and its NIC IDs.",
  ],
  [
    "Microsoft.Network/networkInterfaces/read",
    "GET a VM's NIC with its ETag before changing its ip configuration's pools.",
  ],
  [
    "Microsoft.Network/networkInterfaces/write",
    "PUT the NIC (whole, as read) with If-Match: pool references of one ip configuration changed.",
  ],
  [
    "Microsoft.Network/locations/operations/read",
    "Poll the Azure-AsyncOperation URL of a NIC or backend pool write until it ends.",
  ],
  [
    "Microsoft.Compute/virtualMachineScaleSets/networkInterfaces/read",
    "List a Uniform scale set's instance NICs with their private addresses, for an IP-based pool (issue 43).",
  ],
  [
    "Microsoft.Network/loadBalancers/backendAddressPools/read",
    "GET a declared backend pool: whether it is IP-based, its addresses and its load balancer's ETag (issue 43).",
  ],
  [
    "Microsoft.Network/loadBalancers/backendAddressPools/write",
    "PUT an IP-based pool with If-Match: only the addresses poolsync added change (issue 43).",
  ],
  [
    "Microsoft.Network/applicationGateways/read",
    "GET a declared gateway pool's gateway: whether the pool lists addresses, its addresses, the gateway's ETag (issue 43).",
  ],
  [
    "Microsoft.Network/applicationGateways/write",
    "PUT the gateway whole, as read, with If-Match: only the addresses poolsync added to a pool that lists addresses change (issue 43).",
  ],
  [
    "Microsoft.Network/loadBalancers/backendAddressPools/join/action",
    "Linked-access check: an ip config that references a backend pool joins it.",
  ],
  [
    "Microsoft.Network/virtualNetworks/subnets/join/action",
    "Linked-access check: a NIC configuration write re-submits its subnet reference.",
  ],
  // The NIC array is sent whole, so every other resource it references is re-submitted with it and checked again.
  [
    "Microsoft.Network/networkSecurityGroups/join/action",
    "Linked-access check: NIC configurations that reference a network security group.",
  ],
  [
    "Microsoft.Network/applicationSecurityGroups/joinIpConfiguration/action",
    "Linked-access check: ip configurations in application security groups.",
  ],
  [
    "Microsoft.Network/loadBalancers/inboundNatPools/join/action",
    "Linked-access check: ip configurations that use a load balancer's inbound NAT pools.",
  ],
  [
    "Microsoft.Network/applicationGateways/backendAddressPools/join/action",
    "Linked-access check: ip configurations in Application Gateway backend pools.",
  ],
  [
    "Microsoft.Network/publicIPPrefixes/join/action",
    "Linked-access check: public IP configurations allocated from a public IP prefix.",
  ],
  [
    "Microsoft.Network/virtualNetworks/joinLoadBalancer/action",
    "Linked-access check: an IP-based pool's addresses (or the pool) name their virtual network (issue 43).",
  ],
] as const satisfies readonly (readonly [string, string])[];

/**
 * The backend pool actions (issue 43), a parameter of infra/access.json granted with either grant, since a pool's load
 * balancer may live beside the scale sets or elsewhere: the read wherever poolsync is declared into a load balancer
 * backend pool (every pass asks the pool whether it is IP-based), the write only where IP-based pools are; an
 * Application Gateway's read and write only where poolsync writes a gateway pool that lists addresses (without the
 * read, a gateway pool is joined through the ip configurations, as before issue 43).
 */
export const POOL_ACTIONS: readonly string[] = [
  "Microsoft.Network/loadBalancers/backendAddressPools/read",
  "Microsoft.Network/loadBalancers/backendAddressPools/write",
  "Microsoft.Network/applicationGateways/read",
  "Microsoft.Network/applicationGateways/write",
];
export const DEFAULT_POOL_ACTIONS: readonly string[] = ["Microsoft.Network/loadBalancers/backendAddressPools/read"];

/** The actions alone, in the order above. */
export const REQUIRED_ARM_ACTIONS: readonly string[] = REQUIRED_ARM_ACTIONS_WITH_REASONS.map(([action]) => action);

/**
 * Linked-access joins: granted where a NIC configuration references such a resource (a parameter of infra/access.json).
 */
export const JOIN_ACTIONS: readonly string[] = REQUIRED_ARM_ACTIONS.filter((a) => /\/join[A-Za-z]*\/action$/.test(a));

/** The joins every scale set needs: its ip configurations reference a subnet, and poolsync adds backend pools. */
export const ALWAYS_NEEDED_JOIN_ACTIONS: readonly string[] = [
  "Microsoft.Network/loadBalancers/backendAddressPools/join/action",
  "Microsoft.Network/virtualNetworks/subnets/join/action",
];
