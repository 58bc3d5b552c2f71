// poolsync on the strict simulator, through the real SDK: it never writes without an ETag, speaks a pinned api-version
// that has them, and leaves Automatic/Rolling scale sets' instances to CRP.
import { afterEach, describe, expect, it } from "vitest";
import {
  COMPUTE_API_VERSION,
  FIRST_COMPUTE_API_VERSION_WITH_ETAGS,
  pinComputeApiVersion,
} from "../../src/azure/apiVersion";
import { DEMO, manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import { createPipelineRequest, type PipelineResponse } from "@azure/core-rest-pipeline";

const AUTO_ID = DEMO.scaleSetId.replace(/etag-k8s-mp-0$/, "etag-k8s-mp-auto");
const pool = DEMO.poolId.toLowerCase();
const declare = (scaleSetId: string) => ({
  v: 1,
  kind: "declare",
  scaleSetId,
  backendPoolId: DEMO.poolId,
  state: "present",
});
const writes = (h: Harness) => {
  const s = h.sim.control.stats();
  return s.puts + s.patches + s.instancePuts;
};

describe("poolsync on the strict simulator", () => {
  let h: Harness;
  afterEach(async () => {
    await h.stop();
  });

  it("never writes when ARM answers without an ETag: the declaration fails with the reason, and the timer retries it", async () => {
    const clock = manualClock();
    h = await startHarness({ clock });
    const strip = h.sim.control.injectFault({
      method: "GET",
      path: "virtualMachineScaleSets/etag-k8s-mp-0$",
      stripEtag: true,
      times: Infinity,
    });
    await h.send(declare(DEMO.scaleSetId));
    const [outcome] = await h.drain();
    expect(outcome).toMatchObject({ result: "reconciled", report: { result: "failed", armWrites: 0 } });
    expect(writes(h)).toBe(0);
    const [d] = await h.services.declarations.listForTarget(scaleSetRef(DEMO.scaleSetId));
    expect(d?.outcome).toMatchObject({
      kind: "failed",
      reason: `ARM returned no ETag for ${DEMO.scaleSetId}; poolsync writes only with If-Match`,
      retryAt: expect.any(String),
    });

    strip.cancel();
    clock.advance(h.config.failedRetryMs + 1);
    expect(await h.services.reconcileStale()).toMatchObject({ enqueued: 1 });
    await h.drain();
    expect((await h.services.declarations.listForTarget(scaleSetRef(DEMO.scaleSetId)))[0]?.outcome.kind).toBe(
      "applied",
    );
    expect(h.sim.control.poolMembers(DEMO.poolId)).toHaveLength(2);
  });

  it("writes no instance that ARM listed without an ETag", async () => {
    h = await startHarness({ cacheEnabled: false });
    h.sim.control.injectFault({
      method: "GET",
      path: "etag-k8s-mp-0/virtualMachines$",
      stripEtag: true,
      times: Infinity,
    });
    await h.send(declare(DEMO.scaleSetId));
    await h.drain();
    expect(h.sim.control.stats().instancePuts).toBe(0);
    const [d] = await h.services.declarations.listForTarget(scaleSetRef(DEMO.scaleSetId));
    expect(d?.outcome.reason).toMatch(
      new RegExp(
        `^ARM returned no ETag for ${DEMO.scaleSetId}/virtualMachines/\\d; poolsync writes only with If-Match$`,
      ),
    );
  });

  it(`speaks Compute api-version ${COMPUTE_API_VERSION}, which has ETags, on every call`, async () => {
    expect(COMPUTE_API_VERSION).toBe("2026-03-01");
    expect(COMPUTE_API_VERSION >= FIRST_COMPUTE_API_VERSION_WITH_ETAGS).toBe(true);
    h = await startHarness();
    await h.send(declare(DEMO.scaleSetId));
    await h.drain();
    h.sim.control.settle();
    const urls = h.sim.control.events().flatMap((e) => (e.data.httpRequest ? [e.data.httpRequest.url] : []));
    expect(urls.length).toBeGreaterThan(0);
    for (const u of urls) expect(new URL(u).searchParams.get("api-version")).toBe(COMPUTE_API_VERSION);
    // Whatever version a request was built with, the policy sends the pinned one to Compute, and leaves others alone.
    const seen: string[] = [];
    const next = (r: { url: string }) => {
      seen.push(r.url);
      return Promise.resolve({} as PipelineResponse);
    };
    const policy = pinComputeApiVersion();
    await policy.sendRequest(
      createPipelineRequest({ url: `https://management.azure.com${DEMO.scaleSetId}?api-version=2021-07-01` }),
      next,
    );
    await policy.sendRequest(
      createPipelineRequest({ url: `https://management.azure.com${DEMO.poolId}?api-version=2024-05-01` }),
      next,
    );
    expect(seen.map((u) => new URL(u).searchParams.get("api-version"))).toEqual([COMPUTE_API_VERSION, "2024-05-01"]);
  });

  it("on an Automatic scale set writes the model only; appliedEverywhere once CRP has rolled it out", async () => {
    h = await startHarness({ sim: { upgradeStepMs: 2000 } });
    await h.send(declare(AUTO_ID));
    const [first] = await h.drain();
    expect(first).toMatchObject({
      result: "reconciled",
      report: { result: "applied", instancesWritten: 0, requeueAfterMs: 30_000 },
    });
    expect(h.sim.control.stats()).toMatchObject({ puts: 1, instancePuts: 0 });
    expect(poolsByIpConfig(modelNics(h.sim.control.resource(AUTO_ID)!))).toEqual({ ipConfig0: [pool] });
    const ref = scaleSetRef(AUTO_ID);
    let [d] = await h.services.declarations.listForTarget(ref);
    expect(d?.outcome).toMatchObject({ kind: "applied" });
    expect(d?.outcome.appliedEverywhere).toBeFalsy();

    h.sim.control.settle(); // CRP rolls the model out, and no event says so
    expect(h.sim.control.instances(AUTO_ID).map((vm) => poolsByIpConfig(instanceNics(vm)))).toEqual([
      { ipConfig0: [pool] },
      { ipConfig0: [pool] },
    ]);
    await h.send({ v: 1, kind: "reconcile", scaleSetId: AUTO_ID, reason: "recheck", attempt: 1 }); // what the recheck 30 s later sends
    const [second] = await h.drain();
    expect(second).toMatchObject({ result: "reconciled", report: { result: "unchanged" } });
    expect((second as { report: { requeueAfterMs?: number } }).report.requeueAfterMs).toBeUndefined();
    [d] = await h.services.declarations.listForTarget(ref);
    expect(d?.outcome).toMatchObject({ kind: "applied", appliedEverywhere: true });
    expect(h.sim.control.stats().instancePuts).toBe(0);
  });

  it("on a Rolling scale set writes the model only (an instance PUT would meet CRP's 409)", async () => {
    h = await startHarness({ sim: { upgradeStepMs: 2000 } });
    h.sim.control.write(AUTO_ID, (r) => {
      (r["properties"] as Record<string, unknown>)["upgradePolicy"] = {
        mode: "Rolling",
        rollingUpgradePolicy: { maxBatchInstancePercent: 50 },
      };
    });
    h.sim.control.settle();
    await h.send(declare(AUTO_ID));
    await h.drain();
    expect(h.sim.control.stats()).toMatchObject({ puts: 1, instancePuts: 0, status409: 0 });
    h.sim.control.settle();
    expect(h.sim.control.poolMembers(DEMO.poolId)).toHaveLength(2);
  });
});
