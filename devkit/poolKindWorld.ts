import type { SeedSpec } from "../sim";

/**
 * A made-up world with every pool kind poolsync manages (issue 43), for its tests, the local runtime's and the
 * benchmarks: one load balancer with two IP-based pools (`syncMode: Manual`, as a pool made for addresses says it),
 * two NIC-based pools and an inbound NAT pool; an application gateway with two empty pools and one that lists another
 * writer's addresses (an IP and an FQDN: poolsync writes addresses there too); a Uniform scale set, a Flexible
 * one and `vms` standalone VMs, every NIC in one subnet of the load balancer's virtual network.
 */
export const KINDS_SUBSCRIPTION = "33333333-4444-5555-6666-777777777777";
export const KINDS_RG = "kinds";
const rg = `/subscriptions/${KINDS_SUBSCRIPTION}/resourceGroups/${KINDS_RG}`;
const net = `${rg}/providers/Microsoft.Network`;
const compute = `${rg}/providers/Microsoft.Compute`;

export const KINDS = {
  vnet: `${net}/virtualNetworks/vnet`,
  subnet: `${net}/virtualNetworks/vnet/subnets/nodes`,
  loadBalancer: `${net}/loadBalancers/lb`,
  ipPool: `${net}/loadBalancers/lb/backendAddressPools/ips`,
  ipPool2: `${net}/loadBalancers/lb/backendAddressPools/ips-2`,
  /** IP-based by its first address (another writer's), as a classic pool says it: no syncMode, no network of its own. */
  classicIpPool: `${net}/loadBalancers/lb/backendAddressPools/ips-classic`,
  nicPool: `${net}/loadBalancers/lb/backendAddressPools/nics`,
  nicPool2: `${net}/loadBalancers/lb/backendAddressPools/nics-2`,
  natPool: `${net}/loadBalancers/lb/inboundNatPools/ssh`,
  gateway: `${net}/applicationGateways/agw`,
  gatewayPool: `${net}/applicationGateways/agw/backendAddressPools/web`,
  gatewayPool2: `${net}/applicationGateways/agw/backendAddressPools/web-2`,
  /** Lists addresses (another writer's): poolsync puts the members' IPs in its `backendAddresses`. */
  addressGatewayPool: `${net}/applicationGateways/agw/backendAddressPools/addrs`,
  scaleSet: `${compute}/virtualMachineScaleSets/ss`,
  flex: `${compute}/virtualMachineScaleSets/flex`,
  vm: (i: number) => `${compute}/virtualMachines/vm-${i}`,
};

export function poolKindWorld(opts: { capacity?: number; vms?: number } = {}): SeedSpec {
  const nic = (name: string) => ({
    name,
    primary: true,
    ipConfigurations: [{ name: "ipc", primary: true, subnet: "vnet/nodes" }],
  });
  return {
    subscriptions: [
      {
        id: KINDS_SUBSCRIPTION,
        resourceGroups: [
          {
            name: KINDS_RG,
            location: "westeurope",
            virtualNetworks: [
              {
                name: "vnet",
                addressPrefixes: ["10.0.0.0/8"],
                subnets: [{ name: "nodes", addressPrefix: "10.1.0.0/16" }],
              },
            ],
            loadBalancers: [
              {
                name: "lb",
                virtualNetwork: "vnet",
                backendPools: [
                  { name: "ips", syncMode: "Manual", virtualNetwork: "vnet" },
                  { name: "ips-2", syncMode: "Manual", virtualNetwork: "vnet" },
                  {
                    name: "ips-classic",
                    addresses: [{ name: "by-hand", ipAddress: "10.1.200.9", virtualNetwork: "vnet" }],
                  },
                  "nics",
                  "nics-2",
                ],
                inboundNatPools: [
                  { name: "ssh", frontendPortRangeStart: 50000, frontendPortRangeEnd: 50999, backendPort: 22 },
                ],
              },
            ],
            applicationGateways: [
              {
                name: "agw",
                backendPools: [
                  "web",
                  "web-2",
                  { name: "addrs", backendAddresses: [{ ipAddress: "10.1.250.9" }, { fqdn: "legacy.example.test" }] },
                ],
              },
            ],
            scaleSets: [
              { name: "ss", capacity: opts.capacity ?? 2, nics: [nic("ss-nic")] },
              { name: "flex", capacity: 2, orchestrationMode: "Flexible", nics: [nic("flex-nic")] },
            ],
            virtualMachines: Array.from({ length: opts.vms ?? 2 }, (_, i) => ({
              name: `vm-${i}`,
              nics: [nic(`vm-${i}-nic`)],
            })),
          },
        ],
      },
    ],
  };
}
