// A world with every pool kind, for the simulator's tests of them: a load balancer with an IP-based pool (two
// addresses, one Down), a NIC-based pool, an empty pool and an inbound NAT pool; a scale set whose model joins the NIC
// pool and the NAT pool; an application gateway whose pool a standalone VM's NIC joins; and a second virtual network
// the load balancer is not in.
import type { SeedSpec } from "../../sim/index";

export const SUB = "22222222-3333-4444-5555-666666666666";
export const RG = "pools";
export const RG_PATH = `/subscriptions/${SUB}/resourceGroups/${RG}`;
export const VNET = `${RG_PATH}/providers/Microsoft.Network/virtualNetworks/vnet`;
export const SUBNET = `${VNET}/subnets/nodes`;
export const OTHER_VNET = `${RG_PATH}/providers/Microsoft.Network/virtualNetworks/other`;
export const LB = `${RG_PATH}/providers/Microsoft.Network/loadBalancers/lb`;
export const IP_POOL = `${LB}/backendAddressPools/ips`;
export const NIC_POOL = `${LB}/backendAddressPools/nics`;
export const EMPTY_POOL = `${LB}/backendAddressPools/empty`;
export const NAT_POOL = `${LB}/inboundNatPools/ssh`;
export const VMSS = `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/ss`;
export const AGW = `${RG_PATH}/providers/Microsoft.Network/applicationGateways/agw`;
export const AGW_POOL = `${AGW}/backendAddressPools/web`;
export const AGW_EMPTY_POOL = `${AGW}/backendAddressPools/spare`;
export const VM_NIC = `${RG_PATH}/providers/Microsoft.Network/networkInterfaces/vm-nic`;

export const WORLD: SeedSpec = {
  subscriptions: [
    {
      id: SUB,
      resourceGroups: [
        {
          name: RG,
          location: "westeurope",
          virtualNetworks: [
            {
              name: "vnet",
              addressPrefixes: ["10.0.0.0/16"],
              subnets: [{ name: "nodes", addressPrefix: "10.0.1.0/24" }],
            },
            { name: "other", addressPrefixes: ["10.9.0.0/16"], subnets: [{ name: "elsewhere" }] },
          ],
          loadBalancers: [
            {
              name: "lb",
              backendPools: [
                {
                  name: "ips",
                  kind: "ip",
                  addresses: [
                    { name: "a1", ipAddress: "10.0.1.4", virtualNetwork: "vnet" },
                    { name: "a2", ipAddress: "10.0.1.5", virtualNetwork: "vnet", adminState: "Down" },
                  ],
                },
                "nics",
                "empty",
              ],
              inboundNatPools: [
                { name: "ssh", frontendPortRangeStart: 50000, frontendPortRangeEnd: 50099, backendPort: 22 },
              ],
            },
          ],
          applicationGateways: [
            {
              name: "agw",
              backendPools: [
                { name: "web", backendAddresses: [{ ipAddress: "10.0.1.20" }, { fqdn: "app.example.com" }] },
                "spare",
              ],
            },
          ],
          scaleSets: [
            {
              name: "ss",
              capacity: 2,
              nics: [
                {
                  name: "ss-nic",
                  primary: true,
                  ipConfigurations: [
                    {
                      name: "ipc",
                      primary: true,
                      subnet: "vnet/nodes",
                      backendPools: ["lb/nics"],
                      inboundNatPools: ["lb/ssh"],
                    },
                  ],
                },
              ],
            },
          ],
          virtualMachines: [
            {
              name: "vm",
              nics: [
                {
                  name: "vm-nic",
                  primary: true,
                  ipConfigurations: [
                    { name: "ipc", primary: true, subnet: "vnet/nodes", applicationGatewayBackendPools: ["agw/web"] },
                  ],
                },
              ],
            },
          ],
        },
      ],
    },
  ],
};
