// The events the strict simulator publishes, in both schemas, as poolsync's classifier reads them: Cancel and Failure
// types, a create without httpRequest, and CloudEvents 1.0.
import { afterEach, describe, expect, it } from "vitest";
import { classifyEvent } from "../../src/core/armEvents";
import { startArmSimulator, type ArmSimulator } from "../../sim/index";
import { arm, RG_PATH, VMSS_PATH } from "../sim/testkit";

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

describe("classifyEvent on the simulator's events", () => {
  it.each(["EventGridSchema", "cloudevents"])("reads every outcome in the %s schema", async (schema) => {
    const s = (sim = await startArmSimulator({
      seed: "demo",
      preemptRunningOperation: true,
      operationDurationMs: 1000,
    }));
    const created = `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/fresh`;
    await arm(s.url, "PUT", created, {
      body: { location: "eastus2", sku: { name: "Standard_D2s_v3", capacity: 0 }, properties: {} },
    });
    await arm(s.url, "PATCH", VMSS_PATH, {
      headers: { "x-ms-client-request-id": "older" },
      body: { tags: { a: "1" } },
    });
    await arm(s.url, "PATCH", VMSS_PATH, {
      headers: { "x-ms-client-request-id": "newer" },
      body: { tags: { a: "2" } },
    });
    s.control.settle();
    const got = (await (await fetch(`${s.url}/_sim/events?schema=${schema}`)).json()) as { value: unknown[] };
    const verdicts = got.value.map((e) => classifyEvent(e));
    expect(
      verdicts.map((v) => (v.kind === "act" ? [v.event.type, v.event.target.key, v.event.clientRequestId] : v.kind)),
    ).toEqual([
      ["Microsoft.Resources.ResourceWriteCancel", VMSS_PATH.toLowerCase(), "older"],
      ["Microsoft.Resources.ResourceWriteSuccess", created.toLowerCase(), undefined], // a create: no httpRequest
      ["Microsoft.Resources.ResourceWriteSuccess", VMSS_PATH.toLowerCase(), "newer"],
    ]);
  });
});
