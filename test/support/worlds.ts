import type { SeedSpec } from "../../sim";

/** Made-up worlds beyond the demo seed, for tests and benchmarks. */
export const WIDE_SUBSCRIPTION = "22222222-3333-4444-5555-666666666666";

export function poolId(subscription: string, rg: string, lb: string, pool: string): string {
  return `/subscriptions/${subscription}/resourceGroups/${rg}/providers/Microsoft.Network/loadBalancers/${lb}/backendAddressPools/${pool}`;
}

export function scaleSetId(subscription: string, rg: string, name: string): string {
  return `/subscriptions/${subscription}/resourceGroups/${rg}/providers/Microsoft.Compute/virtualMachineScaleSets/${name}`;
}

/** `scaleSets` scale sets of `capacity` instances and one load balancer with `pools` pools, in resource group `rg`. */
export function wideWorld(opts: { subscription?: string; rg?: string; scaleSets: number; capacity: number; pools: number }): SeedSpec {
  const subscription = opts.subscription ?? WIDE_SUBSCRIPTION;
  const rg = opts.rg ?? "wide";
  return {
    subscriptions: [
      {
        id: subscription,
        resourceGroups: [
          {
            name: rg,
            location: "westeurope",
            virtualNetworks: [{ name: "vnet", addressPrefixes: ["10.0.0.0/8"], subnets: [{ name: "nodes", addressPrefix: "10.2.0.0/16" }] }],
            loadBalancers: [{ name: "lb", backendPools: Array.from({ length: opts.pools }, (_, i) => `pool-${i}`) }],
            scaleSets: Array.from({ length: opts.scaleSets }, (_, i) => ({
              name: `vmss-${i}`,
              capacity: opts.capacity,
              nics: [{ name: "nic-0", primary: true, ipConfigurations: [{ name: "ipConfig0", primary: true, subnet: "vnet/nodes" }] }],
            })),
          },
        ],
      },
    ],
  };
}
