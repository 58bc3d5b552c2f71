// NIC IDs come from ARM's VM model: one outside POOLSYNC_SCOPES is refused before any GET or PUT of it.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createServices } from "../../src/app/services";
import { memoryLogger } from "../../src/app/logger";
import type { ComputePort } from "../../src/core/ports";
import { parseTargetId, type VmRef } from "../../src/core/resourceIds";
import { DEMO, startHarness, type Harness } from "../support/harness";

const SUB = DEMO.subscription;
const VM = `/subscriptions/${SUB}/resourceGroups/etag/providers/Microsoft.Compute/virtualMachines/etag-k8s-vm-0`;
/** The same NIC name in a resource group poolsync may not touch. */
const FOREIGN_NIC = `/subscriptions/${SUB}/resourceGroups/prod/providers/Microsoft.Network/networkInterfaces/etag-k8s-vm-0-nic`;

describe("NIC writes stay inside POOLSYNC_SCOPES", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ env: { POOLSYNC_SCOPES: `/subscriptions/${SUB}/resourceGroups/etag` } });
  });
  afterEach(async () => {
    await h.stop();
  });

  it("a VM model naming a NIC in another resource group: that NIC is never read or written, the declaration says why", async () => {
    // ARM's answer for the VM, as a VM whose NIC lives elsewhere would give it (the simulator keeps NICs beside their
    // VM).
    const real = h.services.compute;
    const compute: ComputePort = Object.assign(Object.create(real) as ComputePort, {
      getVm: async (ref: VmRef) => ({ ...(await real.getVm(ref)), nicIds: [FOREIGN_NIC], primaryNicId: FOREIGN_NIC }),
    });
    const services = createServices(h.config, { compute, log: memoryLogger(), random: () => 0.5 });
    await services.ready();
    const target = parseTargetId(VM);
    if (!target.ok) throw new Error(target.reason);
    await h.send({ v: 1, kind: "declare", targetId: VM, backendPoolId: DEMO.poolId, state: "present" });
    // Played by these services (whose compute answers the foreign NIC), as the queue trigger would.
    const msg = (await h.queue.receiveMessages({ numberOfMessages: 1 })).receivedMessageItems[0]!;
    await services.handleQueueMessage(JSON.parse(Buffer.from(msg.messageText, "base64").toString("utf8")), {
      id: msg.messageId,
      dequeueCount: 1,
      insertionTime: new Date().toISOString(),
    });
    await services.coalescer.idle();

    expect(h.sim.control.stats(FOREIGN_NIC)).toMatchObject({ nicGets: 0, nicPuts: 0 });
    const [decl] = await services.declarations.listForTarget(target.value);
    expect(JSON.stringify(decl?.outcome)).toMatch(/outside POOLSYNC_SCOPES/);
  }, 60_000);
});
