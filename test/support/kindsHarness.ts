import type { JsonObject, Mutation } from "../../sim";
import { KINDS_SUBSCRIPTION, poolKindWorld } from "../../devkit/poolKindWorld";
import { startHarness, type Harness } from "./harness";

/** The harness on the world of every pool kind (devkit/poolKindWorld.ts), poolsync scoped to its subscription. */
export function startKindsHarness(
  env: Record<string, string> = {},
  world: Parameters<typeof poolKindWorld>[0] = {},
): Promise<Harness> {
  return startHarness({
    sim: { seed: poolKindWorld(world) },
    env: { POOLSYNC_SCOPES: `/subscriptions/${KINDS_SUBSCRIPTION}`, ...env },
  });
}

/** Another writer's address added to an IP-based pool as rendered (for `beforeNextWrite`: the next PUT meets 412). */
export function addsAddress(name: string, ipAddress: string, subnetId: string): Mutation {
  return (pool: JsonObject) => {
    const props = pool["properties"] as JsonObject;
    const list = (props["loadBalancerBackendAddresses"] ?? []) as JsonObject[];
    props["loadBalancerBackendAddresses"] = [...list, { name, properties: { ipAddress, subnet: { id: subnetId } } }];
  };
}
