// Seeding load balancers (pools of each kind, their addresses, NAT pools) and application gateways: resources that
// exist already, so no operation runs and no event is published. Seeded addresses pass the same checks as a PUT.
import { randomUUID } from "node:crypto";
import { applicationGatewayId, canonical, loadBalancerId, VNET_TYPE } from "./ids";
import type { JsonObject } from "./json";
import { learnVirtualNetwork } from "./lbModel";
import { CONTROL_API_VERSION, type NetworkHost } from "./networkWrites";
import { acceptPoolBody } from "./poolBodies";
import { refId, type ApplicationGatewaySeed, type BackendPoolSeed, type LoadBalancerSeed } from "./seed";
import type { LoadBalancerRecord } from "./state";

const newWeakEtag = (): string => `W/"${randomUUID()}"`;

function vnetRef(sub: string, rg: string, ref: string): string {
  return ref.startsWith("/") ? ref : `/subscriptions/${sub}/resourceGroups/${rg}/providers/${VNET_TYPE}/${ref}`;
}

function poolBody(sub: string, rg: string, p: BackendPoolSeed): JsonObject {
  return {
    properties: {
      ...(p.virtualNetwork ? { virtualNetwork: { id: vnetRef(sub, rg, p.virtualNetwork) } } : {}),
      ...(p.syncMode ? { syncMode: p.syncMode } : {}),
      loadBalancerBackendAddresses: (p.addresses ?? []).map((a) => ({
        name: a.name,
        properties: {
          ipAddress: a.ipAddress,
          ...(a.virtualNetwork ? { virtualNetwork: { id: vnetRef(sub, rg, a.virtualNetwork) } } : {}),
          ...(a.subnet ? { subnet: { id: refId(sub, rg, a.subnet, VNET_TYPE, "subnets") } } : {}),
          ...(a.adminState ? { adminState: a.adminState } : {}),
        },
      })),
    },
  };
}

export function seedLoadBalancer(
  host: NetworkHost,
  subscriptionId: string,
  resourceGroup: string,
  l: LoadBalancerSeed,
): void {
  const rg = host.requireResourceGroup(subscriptionId, resourceGroup);
  const sub = host.requireSubscription(subscriptionId).id;
  const id = loadBalancerId(sub, rg.name, l.name);
  const lb: LoadBalancerRecord = {
    id,
    name: l.name,
    location: rg.location,
    resourceGroup: rg.name,
    subscriptionId: sub,
    etag: newWeakEtag(),
    resourceGuid: randomUUID(),
    skuName: l.sku ?? "Standard",
    pools: [],
    natPools: (l.inboundNatPools ?? []).map((n) => ({
      name: n.name,
      properties: {
        protocol: n.protocol ?? "Tcp",
        frontendPortRangeStart: n.frontendPortRangeStart,
        frontendPortRangeEnd: n.frontendPortRangeEnd,
        backendPort: n.backendPort,
      },
    })),
    ...(l.virtualNetwork ? { virtualNetworkId: vnetRef(sub, rg.name, l.virtualNetwork) } : {}),
  };
  for (const p of l.backendPools) {
    const seed: BackendPoolSeed = typeof p === "string" ? { name: p } : p;
    const accepted = acceptPoolBody(
      host.state,
      lb,
      seed.name,
      undefined,
      poolBody(sub, rg.name, seed),
      CONTROL_API_VERSION,
    );
    const kind = seed.kind ?? accepted.kind;
    const madeWithPoolApi = (l.poolsMadeWithPoolApi ?? []).some((m) => m.toLowerCase() === seed.name.toLowerCase());
    lb.pools.push({
      id: `${id}/backendAddressPools/${seed.name}`,
      name: seed.name,
      etag: lb.etag,
      addresses: accepted.addresses,
      properties: accepted.properties,
      ...(kind ? { kind } : {}),
      ...(madeWithPoolApi ? { madeWithPoolApi } : {}),
    });
  }
  learnVirtualNetwork(lb);
  host.state.loadBalancers.set(canonical(id), lb);
}

export function seedAppGateway(
  host: NetworkHost,
  subscriptionId: string,
  resourceGroup: string,
  g: ApplicationGatewaySeed,
): void {
  const rg = host.requireResourceGroup(subscriptionId, resourceGroup);
  const sub = host.requireSubscription(subscriptionId).id;
  const id = applicationGatewayId(sub, rg.name, g.name);
  host.state.appGateways.set(canonical(id), {
    id,
    subscriptionId: sub,
    resourceGroup: rg.name,
    name: g.name,
    location: rg.location,
    body: {
      properties: {
        sku: { name: g.skuName ?? "Standard_v2", tier: g.tier ?? "Standard_v2", capacity: g.capacity ?? 2 },
        gatewayIPConfigurations: g.subnet
          ? [
              {
                name: "appGatewayIpConfig",
                properties: { subnet: { id: refId(sub, rg.name, g.subnet, VNET_TYPE, "subnets") } },
              },
            ]
          : [],
        backendAddressPools: g.backendPools.map((p) =>
          typeof p === "string"
            ? { name: p, properties: { backendAddresses: [] } }
            : { name: p.name, properties: { backendAddresses: structuredClone(p.backendAddresses ?? []) } },
        ),
      },
    },
    etag: newWeakEtag(),
    resourceGuid: randomUUID(),
    provisioningState: "Succeeded",
  });
}
