import type { SeedSpec } from "../sim";

/** Made-up worlds beyond the demo seed, for tests and benchmarks. */
export const WIDE_SUBSCRIPTION = "22222222-3333-4444-5555-666666666666";

export function poolId(subscription: string, rg: string, lb: string, pool: string): string {
  return `/subscriptions/${subscription}/resourceGroups/${rg}/providers/Microsoft.Network/loadBalancers/${lb}/backendAddressPools/${pool}`;
}

export function scaleSetId(subscription: string, rg: string, name: string): string {
  return `/subscriptions/${subscription}/resourceGroups/${rg}/providers/Microsoft.Compute/virtualMachineScaleSets/${name}`;
}

/** `scaleSets` scale sets of `capacity` instances and one load balancer with `pools` pools, in resource group `rg`. */
export function wideWorld(opts: {
  subscription?: string;
  rg?: string;
  scaleSets: number;
  capacity: number;
  pools: number;
}): SeedSpec {
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
            virtualNetworks: [
              {
                name: "vnet",
                addressPrefixes: ["10.0.0.0/8"],
                subnets: [{ name: "nodes", addressPrefix: "10.2.0.0/16" }],
              },
            ],
            loadBalancers: [{ name: "lb", backendPools: Array.from({ length: opts.pools }, (_, i) => `pool-${i}`) }],
            scaleSets: Array.from({ length: opts.scaleSets }, (_, i) => ({
              name: `vmss-${i}`,
              capacity: opts.capacity,
              nics: [
                {
                  name: "nic-0",
                  primary: true,
                  ipConfigurations: [{ name: "ipConfig0", primary: true, subnet: "vnet/nodes" }],
                },
              ],
            })),
          },
        ],
      },
    ],
  };
}

/**
 * Resource groups rg-0 … of WIDE_SUBSCRIPTION with `perGroup[i]` scale sets each (capacity instances), each group its
 * own load balancer.
 */
export function groupsWorld(perGroup: number[], capacity: number): SeedSpec {
  return {
    subscriptions: [
      {
        id: WIDE_SUBSCRIPTION,
        resourceGroups: perGroup.map(
          (n, g) =>
            wideWorld({ subscription: WIDE_SUBSCRIPTION, rg: `rg-${g}`, scaleSets: n, capacity, pools: 1 })
              .subscriptions[0]!.resourceGroups[0]!,
        ),
      },
    ],
  };
}

/** The scale set IDs of groupsWorld(perGroup, …), group by group. */
export const groupsWorldIds = (perGroup: number[]) =>
  perGroup.flatMap((n, g) =>
    Array.from({ length: n }, (_, i) => scaleSetId(WIDE_SUBSCRIPTION, `rg-${g}`, `vmss-${i}`)),
  );
