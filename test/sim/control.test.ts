// The control API: another writer, the interleaved writer, faults, operations, scaling, delete, stats and events.
import { EventGridDeserializer, isSystemEvent } from "@azure/eventgrid";
import { afterEach, describe, expect, it } from "vitest";
import { simComputeClient } from "../../sim/client";
import { startArmSimulator, type ArmSimulator, type ArmSimulatorOptions, type EventGridEvent } from "../../sim/index";
import { arm, ipConfig, nicsOf, POOL_ID, SUB, VMSS_PATH, instanceChange } from "./testkit";

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});
async function start(opts: ArmSimulatorOptions = {}): Promise<ArmSimulator> {
  sim = await startArmSimulator({ seed: "demo", ...opts });
  return sim;
}
const patchTags = (s: ArmSimulator, tags: Record<string, string>, headers: Record<string, string> = {}) =>
  arm(s.url, "PATCH", VMSS_PATH, { body: { tags }, headers });

describe("another writer", () => {
  it("writes directly: ETag bump, the change stored, an event", async () => {
    const s = await start();
    const after = s.control.write(VMSS_PATH, (r) => nicsOf(r)[0].properties.ipConfigurations.push(ipConfig("theirs")), {
      clientRequestId: "their-id",
    });
    expect(after["etag"]).toBe('"2"');
    s.control.settle();
    const e = s.control.events().at(-1);
    expect(e?.data).toMatchObject({
      operationName: "Microsoft.Compute/virtualMachineScaleSets/write",
      httpRequest: { clientRequestId: "their-id" },
    });
    // A mutation that changes nothing is a no-op write: the ETag stays.
    expect(s.control.write(VMSS_PATH, () => undefined)["etag"]).toBe('"2"');
  });

  it("meets the rules the app's writes meet: 409 while an operation runs (in-process and over /_sim/), or preempts it when set so", async () => {
    const s = await start({ operationDurationMs: 60_000 });
    expect((await patchTags(s, { ours: "1" })).status).toBe(200);
    const theirs = (r: Record<string, unknown>) => {
      r["tags"] = { theirs: "1" };
    };
    expect(() => s.control.write(VMSS_PATH, theirs)).toThrow(
      expect.objectContaining({ status: 409, body: { error: expect.objectContaining({ code: "Conflict" }) } }),
    );
    // Across the scale set too: an instance write while the model write runs.
    expect(() => s.control.write(`${VMSS_PATH}/virtualMachines/0`, theirs)).toThrow(
      expect.objectContaining({ status: 409 }),
    );
    expect(() => s.control.scale(VMSS_PATH, 3)).toThrow(expect.objectContaining({ status: 409 }));
    const overHttp = await fetch(`${s.url}/_sim/write`, {
      method: "POST",
      body: JSON.stringify({ id: VMSS_PATH, merge: { tags: { theirs: "1" } } }),
    });
    expect(overHttp.status).toBe(409);
    expect(((await overHttp.json()) as { error: { code: string } }).error.code).toBe("Conflict");
    expect(s.control.resource(VMSS_PATH)?.["tags"]).toEqual({ ours: "1" });
    await s.stop();

    const p = await start({ operationDurationMs: 60_000, preemptRunningOperation: true });
    expect((await patchTags(p, { ours: "1" })).status).toBe(200);
    p.control.write(VMSS_PATH, theirs);
    expect(p.control.operations().map((o) => o.status)).toEqual(["Canceled", "InProgress"]);
    expect(p.control.operations()[0]?.error).toMatchObject({ code: "OperationPreempted" });
  });

  it("interleaves before the next write: If-Match gets 412 every time, a write without it loses the change", async () => {
    const s = await start();
    const client = simComputeClient(s, SUB);
    const handle = s.control.beforeNextWrite(
      VMSS_PATH.toLowerCase(),
      (r) => {
        r["tags"] = { ...(r["tags"] as Record<string, string>), other: String(Date.now()) };
      },
      { times: Infinity },
    );
    for (let i = 0; i < 3; i++) {
      const ss = await client.virtualMachineScaleSets.get("etag", "etag-k8s-mp-0");
      const err = await client.virtualMachineScaleSets
        .update("etag", "etag-k8s-mp-0", { tags: { mine: "1" } }, { ifMatch: ss.etag, updateIntervalInMs: 5 })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ statusCode: 412, code: "PreconditionFailed" });
    }
    expect(handle.applied()).toBe(3);
    handle.cancel();
    s.control.beforeNextWrite(/etag-k8s-mp-0$/i, (r) => {
      r["tags"] = { other: "x" };
    });
    const ss = await client.virtualMachineScaleSets.get("etag", "etag-k8s-mp-0");
    await client.virtualMachineScaleSets.createOrUpdate(
      "etag",
      "etag-k8s-mp-0",
      { location: "eastus2", tags: { ...ss.tags, mine: "1" } },
      { updateIntervalInMs: 5 },
    );
    expect(s.control.resource(VMSS_PATH)?.["tags"]).toEqual({ ...ss.tags, mine: "1" }); // "other" is lost
  });
});

describe("faults", () => {
  it("fails the next N matching requests with the status of choice, then serves normally", async () => {
    const s = await start();
    s.control.injectFault({ method: "GET", path: "virtualMachineScaleSets/etag-k8s-mp-0$", status: 503, times: 2 });
    expect((await arm(s.url, "GET", VMSS_PATH)).status).toBe(503);
    expect((await arm(s.url, "PATCH", VMSS_PATH, { body: {} })).status).toBe(200); // method does not match
    expect((await arm(s.url, "GET", VMSS_PATH)).status).toBe(503);
    expect((await arm(s.url, "GET", VMSS_PATH)).status).toBe(200);
  });

  it("injects 429 with Retry-After, 409, and custom bodies and headers", async () => {
    const s = await start();
    s.control.injectFault({ path: "etag-k8s-mp-0$", retryAfterSeconds: 7 });
    const t = await arm(s.url, "GET", VMSS_PATH);
    expect(t.status).toBe(429);
    expect(t.headers.get("retry-after")).toBe("7");
    expect(t.body.code).toBe("OperationNotAllowed");
    s.control.injectFault({ path: "etag-k8s-mp-0$", status: 409 });
    expect((await arm(s.url, "GET", VMSS_PATH)).body.error.message).toMatch(
      /^The request failed due to conflict with a concurrent request\. To resolve it/,
    );
    s.control.injectFault({
      path: "etag-k8s-mp-0$",
      status: 500,
      body: { error: { code: "X", message: "y" } },
      headers: { "x-test": "1" },
    });
    const c = await arm(s.url, "GET", VMSS_PATH);
    expect([c.status, c.body.error.code, c.headers.get("x-test")]).toEqual([500, "X", "1"]);
    expect(s.control.stats(VMSS_PATH)).toMatchObject({ gets: 3, status429: 1, status409: 1 });
  });

  it("drops the connection", async () => {
    const s = await start();
    s.control.injectFault({ path: "etag-k8s-mp-0$", drop: true });
    await expect(arm(s.url, "GET", VMSS_PATH)).rejects.toThrow();
    expect((await arm(s.url, "GET", VMSS_PATH)).status).toBe(200);
  });

  it("delays past the client's timeout", async () => {
    const s = await start();
    s.control.injectFault({ path: "etag-k8s-mp-0$", delayMs: 300 });
    const slow = fetch(`${s.url}${VMSS_PATH}?api-version=2026-03-01`, {
      headers: { authorization: "Bearer t" },
      signal: AbortSignal.timeout(50),
    });
    await expect(slow).rejects.toThrow();
  });

  it("writes, then loses the answer (dropped, or an error status)", async () => {
    const s = await start();
    s.control.injectFault({ method: "PATCH", path: "etag-k8s-mp-0$", afterWrite: true });
    await expect(patchTags(s, { lost: "answer" })).rejects.toThrow();
    expect(s.control.resource(VMSS_PATH)).toMatchObject({ etag: '"2"', tags: { lost: "answer" } });
    s.control.settle(); // else the next write meets the first one's operation: 409
    s.control.injectFault({ method: "PATCH", path: "etag-k8s-mp-0$", afterWrite: true, status: 500 });
    expect((await patchTags(s, { again: "1" })).status).toBe(500);
    expect(s.control.resource(VMSS_PATH)?.["etag"]).toBe('"3"');
  });

  it("ends the next operation on a resource Failed", async () => {
    const s = await start();
    s.control.failNextOperation(VMSS_PATH);
    const client = simComputeClient(s, SUB);
    await expect(
      client.virtualMachineScaleSets.update("etag", "etag-k8s-mp-0", { tags: { a: "1" } }, { updateIntervalInMs: 5 }),
    ).rejects.toThrow();
    expect(s.control.resource(VMSS_PATH)?.["properties"]).toMatchObject({ provisioningState: "Failed" });
    expect(s.control.events().at(-1)?.eventType).toBe("Microsoft.Resources.ResourceWriteFailure");
  });
});

describe("scaling and deleting", () => {
  it("scales out from the current model and in by removing the highest instance IDs", async () => {
    const s = await start();
    s.control.write(VMSS_PATH, (r) => {
      nicsOf(r)[0].properties.ipConfigurations[0].properties.loadBalancerBackendAddressPools = [{ id: POOL_ID }];
    });
    s.control.settle(); // another writer's scale meets a running model write with 409, as the app's would
    s.control.scale(VMSS_PATH, 4);
    const during = s.control
      .instances(VMSS_PATH)
      .map((i) => [i["instanceId"], (i["properties"] as { provisioningState: string }).provisioningState]);
    expect(during).toEqual([
      ["0", "Succeeded"],
      ["1", "Succeeded"],
      ["2", "Creating"],
      ["3", "Creating"],
    ]);
    s.control.settle();
    const latest = s.control
      .instances(VMSS_PATH)
      .map((i) => (i["properties"] as { latestModelApplied: boolean }).latestModelApplied);
    expect(latest).toEqual([false, false, true, true]);
    expect(s.control.poolMembers(POOL_ID).map((id) => id.split("/virtualMachines/")[1]?.split("/")[0])).toEqual([
      "2",
      "3",
    ]);
    const vmIdOfOne = (s.control.instances(VMSS_PATH)[1]?.["properties"] as { vmId: string }).vmId;
    s.control.scale(VMSS_PATH, 1);
    s.control.settle();
    expect(s.control.instances(VMSS_PATH).map((i) => i["instanceId"])).toEqual(["0"]);
    s.control.scale(VMSS_PATH, 2);
    s.control.settle();
    // Azure reuses the IDs of deleted instances (a setting, on by default: the lowest free one) ...
    const reborn = s.control.instances(VMSS_PATH);
    expect(reborn.map((i) => i["instanceId"])).toEqual(["0", "1"]);
    expect(reborn[1]?.["properties"]).not.toMatchObject({ vmId: vmIdOfOne });
  });

  it("with reuseInstanceIds off, instance IDs only grow", async () => {
    const s = await start({ reuseInstanceIds: false });
    s.control.scale(VMSS_PATH, 4);
    s.control.settle();
    s.control.scale(VMSS_PATH, 1);
    s.control.settle();
    s.control.scale(VMSS_PATH, 2);
    s.control.settle();
    expect(s.control.instances(VMSS_PATH).map((i) => i["instanceId"])).toEqual(["0", "4"]);
  });

  it("a stale capacity in a write changes the capacity (why writers must not send sku)", async () => {
    const s = await start();
    const cached = (await arm(s.url, "GET", VMSS_PATH)).body;
    s.control.scale(VMSS_PATH, 5);
    s.control.settle();
    await arm(s.url, "PUT", VMSS_PATH, { body: { location: "eastus2", sku: cached.sku } });
    s.control.settle();
    expect(s.control.instances(VMSS_PATH)).toHaveLength(2);
  });

  it("deletes a scale set or an instance as another writer", async () => {
    const s = await start();
    s.control.delete(s.control.ids.instance(VMSS_PATH, 1));
    s.control.settle();
    expect(s.control.resource(VMSS_PATH)).toMatchObject({ etag: '"2"', sku: { capacity: 1 } });
    s.control.delete(VMSS_PATH);
    expect(s.control.resource(VMSS_PATH)?.["properties"]).toMatchObject({ provisioningState: "Deleting" });
    s.control.settle();
    expect(s.control.resource(VMSS_PATH)).toBeUndefined();
    expect(s.control.events().map((e) => e.data.operationName)).toEqual([
      "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/delete",
      "Microsoft.Compute/virtualMachineScaleSets/delete",
    ]);
  });

  it("upgrades instances to the latest model with manualUpgrade (an action event)", async () => {
    const s = await start({ operationDurationMs: 5_000 });
    s.control.write(VMSS_PATH, (r) => {
      nicsOf(r)[0].properties.ipConfigurations[0].properties.loadBalancerBackendAddressPools = [{ id: POOL_ID }];
    });
    expect((await arm(s.url, "POST", `${VMSS_PATH}/manualupgrade`, { body: { instanceIds: ["0"] } })).status).toBe(409); // the write's operation runs
    s.control.settle();
    const r = await arm(s.url, "POST", `${VMSS_PATH}/manualupgrade`, { body: { instanceIds: ["0"] } });
    expect(r.status).toBe(202);
    s.control.settle();
    expect(s.control.poolMembers(POOL_ID)).toHaveLength(1);
    expect(s.control.events().map((e) => e.eventType)).toContain("Microsoft.Resources.ResourceActionSuccess");
  });
});

describe("stats and events", () => {
  it("counts per resource (any casing, instances under their scale set) and in total; reset clears", async () => {
    const s = await start();
    await arm(s.url, "GET", VMSS_PATH);
    await arm(s.url, "GET", `${VMSS_PATH}/virtualMachines`);
    await arm(s.url, "PUT", `${VMSS_PATH}/virtualMachines/0`, { body: instanceChange("1") });
    await arm(s.url, "PUT", `${VMSS_PATH}/virtualMachines/0`, {
      headers: { "if-match": '"1"' },
      body: instanceChange("2"),
    });
    expect(s.control.stats(VMSS_PATH.toUpperCase())).toMatchObject({
      gets: 1,
      instanceLists: 1,
      instancePuts: 2,
      status412: 1,
      puts: 0,
    });
    expect(s.control.stats(`${VMSS_PATH}/virtualMachines/0`)).toMatchObject({ gets: 0, instancePuts: 2 });
    expect(s.control.stats().requests).toBe(4);
    s.control.resetStats();
    expect(s.control.stats().requests).toBe(0);
  });

  it("publishes what an ARM system topic would, in the Event Grid schema; CRP's internal ETag bump has no event", async () => {
    const received: EventGridEvent[] = [];
    const s = await start({ onEvent: (e) => received.push(e), instanceWritePropagatesToScaleSetAfterMs: 3000 });
    await arm(s.url, "PUT", `${VMSS_PATH}/virtualMachines/0`, {
      headers: { "x-ms-client-request-id": "my-client-id", "x-ms-correlation-request-id": "my-correlation" },
      body: instanceChange("1"),
    });
    s.control.clock.advance(2900);
    expect(s.control.resource(VMSS_PATH)?.["etag"]).toBe('"1"');
    s.control.settle();
    expect(received).toHaveLength(1);
    const [vmEvent] = await new EventGridDeserializer().deserializeEventGridEvents(JSON.stringify(received));
    if (!vmEvent) throw new Error("one event expected");
    expect(isSystemEvent("Microsoft.Resources.ResourceWriteSuccess", vmEvent)).toBe(true);
    expect(vmEvent).toMatchObject({
      topic: `/subscriptions/${SUB}`,
      subject: `${VMSS_PATH}/virtualMachines/0`,
      dataVersion: "2",
      data: {
        resourceUri: `${VMSS_PATH}/virtualMachines/0`,
        operationName: "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/write",
        status: "Succeeded",
        correlationId: "my-correlation",
        httpRequest: { clientRequestId: "my-client-id", method: "PUT" },
        subscriptionId: SUB,
        tenantId: "00000000-0000-0000-0000-000000000000",
        resourceProvider: "Microsoft.Compute",
        resourceGroup: "etag",
      },
    });
    // CRP's internal follow-up moved the scale set's ETag, seconds later, and nothing announced it.
    expect(s.control.resource(VMSS_PATH)?.["etag"]).toBe('"2"');
  });

  it("takes claims from a JWT bearer token", async () => {
    const s = await start();
    const payload = Buffer.from(JSON.stringify({ appid: "app-123", oid: "o-1" })).toString("base64url");
    await arm(s.url, "PATCH", VMSS_PATH, { token: `h.${payload}.sig`, body: { tags: { a: "1" } } });
    s.control.settle();
    expect(s.control.events().at(-1)?.data.claims).toEqual({ appid: "app-123", oid: "o-1" });
  });

  it("reset forgets resources, events and stats, and seeds again", async () => {
    const s = await start();
    await patchTags(s, { a: "1" });
    s.control.reset({ seed: "demo" });
    expect(s.control.resource(VMSS_PATH)?.["etag"]).toBe('"1"');
    expect(s.control.events()).toHaveLength(0);
    expect(s.control.stats().requests).toBe(0);
  });
});
