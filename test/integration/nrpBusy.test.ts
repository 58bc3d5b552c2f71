// Network RP's "busy" answers through the whole app: a NIC write that meets another operation on the NIC (409
// AnotherOperationInProgress) or NRP's 429 RetryableError is sent back to wait and applies later; it never fails the
// declaration, however often it came back, and a 429 about one NIC holds back no other write of the subscription.
import { afterEach, describe, expect, it } from "vitest";
import type { JsonObject } from "../../sim";
import { nicPoolsByIpConfig } from "../../sim/wire";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { parseTargetId, type TargetRef } from "../../src/core/resourceIds";
import { DEMO, startHarness, type Harness } from "../support/harness";

const RG = `/subscriptions/${DEMO.subscription}/resourceGroups/etag/providers`;
const VM = `${RG}/Microsoft.Compute/virtualMachines/etag-k8s-vm-0`;
const NIC = `${RG}/Microsoft.Network/networkInterfaces/etag-k8s-vm-0-nic`;

function ref(id: string): TargetRef {
  const r = parseTargetId(id);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
}

async function declare(h: Harness, target: TargetRef, id: string): Promise<void> {
  await h.services.declarations.upsert(target, {
    scaleSetId: id,
    backendPoolId: DEMO.poolId,
    ipConfiguration: "",
    state: "present",
    declaredAt: new Date().toISOString(),
    requestId: `r-${id.split("/").pop()}`,
    declaredBy: QUEUE_DECLARER,
  });
}

/** Runs `work` while the simulator's operations are ended as soon as they start (its clock stands at 1×). */
async function settling<T>(h: Harness, work: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => h.sim.control.settle(), 10);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

describe("Network RP's busy answers are waits, not failures", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("409 AnotherOperationInProgress on a NIC: sent back to wait even past POOLSYNC_MAX_ATTEMPTS, then applied; theirs kept", async () => {
    // NIC writes run an operation (a minute of the simulator's time) the next write meets.
    h = await startHarness({
      sim: { nicWriteAsync: true, operationDurationMs: 60_000 },
      env: { POOLSYNC_MAX_ATTEMPTS: "1" },
    });
    const vm = ref(VM);
    await declare(h, vm, VM);
    // Another writer's NIC write whose operation still runs when poolsync writes.
    h.sim.control.write(NIC, (n) => void (n["tags"] = { theirs: "kept" }));
    const busy = await h.services.reconcile(vm, { reason: "test", attempt: 5 });
    expect(busy).toMatchObject({ result: "requeued" });
    expect(busy.reason).toMatch(/409 AnotherOperationInProgress/);
    const [pending] = await h.services.declarations.listForTarget(vm);
    expect(pending?.outcome.kind).toBe("pending");
    // Their operation ends; the requeued pass (its sixth attempt of one allowed) applies.
    h.sim.control.settle();
    const applied = await settling(h, () => h!.services.reconcile(vm, { reason: "retry", attempt: 6 }));
    expect(applied).toMatchObject({ result: "applied" });
    const nic = h.sim.control.resource(NIC) as JsonObject;
    expect(nicPoolsByIpConfig(nic).ipConfig0).toEqual([DEMO.poolId.toLowerCase()]);
    expect(nic["tags"]).toEqual({ theirs: "kept" });
    expect(h.sim.control.stats(NIC).status409).toBe(1);
  });

  it("429 RetryableError about one NIC (its load balancer busy): that NIC waits Retry-After, a scale set of the subscription does not", async () => {
    h = await startHarness({ env: { POOLSYNC_MAX_ATTEMPTS: "1" } });
    h.sim.control.injectFault({
      method: "PUT",
      path: /networkInterfaces\/etag-k8s-vm-0-nic/,
      status: 429,
      headers: { "retry-after": "10" },
      body: {
        error: {
          code: "RetryableError",
          message: "A retryable error occurred.",
          details: [
            {
              code: "ReferencedResourceNotProvisioned",
              message:
                "Cannot proceed with operation because resource etag-k8s used by resource etag-k8s-vm-0-nic is not in Succeeded state.",
            },
          ],
        },
      },
    });
    const vm = ref(VM);
    await declare(h, vm, VM);
    const throttled = await h.services.reconcile(vm, { reason: "test", attempt: 3 });
    expect(throttled).toMatchObject({ result: "requeued", requeueAfterMs: 10_000 });
    expect(throttled.reason).toMatch(/ReferencedResourceNotProvisioned/);
    expect((await h.services.declarations.listForTarget(vm))[0]?.outcome.kind).toBe("pending");
    // A model write of the same subscription goes out at once (before, the NIC's 429 closed ARM's write budget of the
    // whole subscription for its Retry-After).
    const ss = ref(DEMO.scaleSetId);
    await declare(h, ss, DEMO.scaleSetId);
    expect(await h.services.reconcile(ss, { reason: "test", attempt: 0 })).toMatchObject({ result: "applied" });
  });
});
