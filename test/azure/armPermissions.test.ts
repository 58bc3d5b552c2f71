import diagnostics from "node:diagnostics_channel";
import type { ClientRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { KINDS, KINDS_SUBSCRIPTION, poolKindWorld } from "../../devkit/poolKindWorld";
import {
  ALWAYS_NEEDED_JOIN_ACTIONS,
  DEFAULT_POOL_ACTIONS,
  JOIN_ACTIONS,
  POOL_ACTIONS,
  REQUIRED_ARM_ACTIONS,
  REQUIRED_ARM_ACTIONS_WITH_REASONS,
} from "../../src/azure/armPermissions";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { targetRef } from "../support/declareOn";
import { startHarness, type Harness } from "../support/harness";

/**
 * The RBAC actions poolsync's role grants, against the ARM requests its edges really make: every pool kind reconciled
 * through the real SDK clients against the simulator, each request seen as it leaves the process (Node's
 * `http.client.request.start` channel) and named by the action ARM would check for it. (infra/access.json grants what
 * this module lists: test/infra/consistency.test.ts.)
 */

/** The action ARM authorises a request by: the resource types on its path, and read or write by its method. */
function actionOf(method: string, path: string): string {
  const [namespace, ...rest] = path.split("?")[0]!.split("/providers/").pop()!.split("/");
  const types = rest.filter((_, i) => i % 2 === 0);
  const verb = method === "GET" ? "read" : method === "PUT" || method === "PATCH" ? "write" : method.toLowerCase();
  return `${namespace}/${types.join("/")}/${verb}`.toLowerCase();
}

/** The actions of every request this process sends to `host` from now until stopped. */
function actionsSentTo(host: string) {
  const seen = new Set<string>();
  const onStart = (message: unknown) => {
    const request = (message as { request: ClientRequest }).request;
    if (request.getHeader("host") === host) seen.add(actionOf(request.method, request.path));
  };
  diagnostics.subscribe("http.client.request.start", onStart);
  return { seen, stop: () => diagnostics.unsubscribe("http.client.request.start", onStart) };
}

const lower = (actions: readonly string[]) => actions.map((a) => a.toLowerCase()).sort();

describe("the ARM actions poolsync needs", () => {
  let h: Harness | undefined;
  let recording: ReturnType<typeof actionsSentTo> | undefined;
  afterEach(async () => {
    recording?.stop();
    await h?.stop();
    h = recording = undefined;
  });

  it("every request the edges make in passes of every target and pool kind is a listed action, and every listed one but the joins is made", async () => {
    h = await startHarness({
      sim: { seed: poolKindWorld({ capacity: 2, vms: 1 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${KINDS_SUBSCRIPTION}`, POOLSYNC_GATHER_MILLISECONDS: "0" },
    });
    recording = actionsSentTo(new URL(h.sim.url).host);
    const passes: Array<[target: string, pool: string]> = [
      [KINDS.scaleSet, KINDS.nicPool], // the model and each instance, with their operations
      [KINDS.flex, KINDS.nicPool], // a Flexible scale set's VMs, found in their resource group, and their NICs
      [KINDS.scaleSet, KINDS.ipPool], // the instances' NICs listed for their addresses; the pool written
      [KINDS.vm(0), KINDS.addressGatewayPool], // the gateway read and written whole
    ];
    for (const [i, [target, pool]] of passes.entries()) {
      const ref = targetRef(target);
      await h.services.declarations.upsert(ref, {
        scaleSetId: target,
        backendPoolId: pool,
        ipConfiguration: "",
        state: "present",
        declaredAt: new Date(Date.now() + i).toISOString(),
        requestId: `perm-${i}`,
        declaredBy: QUEUE_DECLARER,
      });
      expect((await h.services.reconcile(ref, { reason: "test", attempt: 0 })).result).toBe("applied");
      h.sim.control.settle();
    }
    const made = [...recording.seen].sort();
    expect(made.filter((a) => !lower(REQUIRED_ARM_ACTIONS).includes(a))).toEqual([]);
    // The joins are checked by ARM on what a write references, not asked for by a request of their own.
    expect(made).toEqual(lower(REQUIRED_ARM_ACTIONS.filter((a) => !JOIN_ACTIONS.includes(a))));
  });

  it("the joins are exactly the linked-access checks, and the grants' defaults are among the actions listed", () => {
    const linked = REQUIRED_ARM_ACTIONS_WITH_REASONS.filter(([, why]) => why.startsWith("Linked-access check"));
    expect([...JOIN_ACTIONS].sort()).toEqual(linked.map(([action]) => action).sort());
    for (const a of ALWAYS_NEEDED_JOIN_ACTIONS) expect(JOIN_ACTIONS).toContain(a);
    for (const a of DEFAULT_POOL_ACTIONS) expect(POOL_ACTIONS).toContain(a);
    for (const a of POOL_ACTIONS) expect(REQUIRED_ARM_ACTIONS.filter((r) => !JOIN_ACTIONS.includes(r))).toContain(a);
  });
});
