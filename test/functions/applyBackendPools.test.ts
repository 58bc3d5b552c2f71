import { InvocationContext } from "@azure/functions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { services } from "../../src/app/services";
import { applyBackendPools } from "../../src/functions/applyBackendPools";
import { modelNics, poolsByIpConfig } from "../../sim/wire";
import { DEMO } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { startFunctionWorld, type FunctionWorld } from "./support";

let world: FunctionWorld;
beforeAll(async () => {
  world = await startFunctionWorld();
});
afterAll(async () => {
  await world.stop();
});

const context = (id: string, dequeueCount = 1) =>
  new InvocationContext({
    invocationId: `inv-${id}`,
    functionName: "applyBackendPools",
    triggerMetadata: { id, dequeueCount, insertionTime: "2026-12-02T10:00:00.000Z" },
  });

describe("applyBackendPools (queue trigger), called as the host calls it", () => {
  it("stores the declaration under the queue message id and applies it to the scale set", async () => {
    await applyBackendPools(
      { v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" },
      context("msg-1"),
    );
    const [stored] = await services().declarations.listForTarget(scaleSetRef(DEMO.scaleSetId));
    expect(stored).toMatchObject({ requestId: "queue-msg-1", state: "present", outcome: { kind: "applied" } });
    expect(poolsByIpConfig(modelNics(world.sim.control.resource(DEMO.scaleSetId)!))).toEqual({
      ipConfig0: [DEMO.poolId.toLowerCase()],
    });
  });

  it("a message that is not a declaration goes to the poison queue with the reason, and the invocation succeeds", async () => {
    await expect(
      applyBackendPools({ v: 1, kind: "declare", scaleSetId: "not-an-id" }, context("msg-2")),
    ).resolves.toBeUndefined();
    const peeked = await services().queue.poison.peekMessages({ numberOfMessages: 32 });
    const reasons = peeked.peekedMessageItems.map(
      (m) => (JSON.parse(Buffer.from(m.messageText, "base64").toString("utf8")) as { reason: string }).reason,
    );
    expect(reasons.some((r) => r.startsWith("scaleSetId"))).toBe(true);
  });
});
