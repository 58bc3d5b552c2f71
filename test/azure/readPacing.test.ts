import { createDefaultHttpClient, createPipelineRequest, type PipelineResponse } from "@azure/core-rest-pipeline";
import { afterEach, describe, expect, it } from "vitest";
import { namedBuckets, ReadPacer } from "../../src/azure/readPacing";
import { CRP_WINDOWS, plannable } from "../../src/core/armBudgets";
import { OWN_PACING, ThrottledError } from "../../src/core/errors";
import { comeBackOf } from "../../src/reconcile/passResult";
import { POLL_RESERVE, READ_BUDGET } from "../../src/core/tokenBucket";
import { manualClock } from "../support/harness";
import { recordingServer, type Answer, type RecordingServer } from "../support/recordingServer";

/**
 * The read pacer: every ARM read waits for its turn in the budgets it is charged to (ARM's read bucket, CRP's windows
 * and buckets, NRP's window) rather than earn a 429, and a 429 that comes anyway closes what it names. Through its
 * pipeline policy over real HTTP where the answers matter, on a clock the test moves (a sleep moves it at once).
 */

const SUB = "00000000-aaaa-4bbb-8ccc-000000000047";
const OTHER_SUB = "00000000-aaaa-4bbb-8ccc-000000000048";
const RG = `/subscriptions/${SUB}/resourceGroups/rg/providers`;
const scaleSet = (name: string) => `${RG}/Microsoft.Compute/virtualMachineScaleSets/${name}`;
/** A LIST of a scale set's instances: CRP's HighCostGet windows, no bucket of its own. */
const instances = (name: string) => `${scaleSet(name)}/virtualMachines`;
const nic = (name: string) => `${RG}/Microsoft.Network/networkInterfaces/${name}`;

/** The read's refusal as throttled: without waiting, saying why and how long. */
async function refusal(read: Promise<unknown>): Promise<{ retryAfterMs: number; why: string }> {
  const err = await read.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ThrottledError)) throw new Error(`expected the read refused as throttled, got ${String(err)}`);
  return { retryAfterMs: err.retryAfterMs, why: /\(([^)]*)\)$/.exec(err.message)?.[1] ?? err.message };
}

/** A window's wait: until the reads counted in it have aged out of it (a little margin beyond its length). */
const windowWait = (windowMs: number) => ({
  retryAfterMs: expect.toSatisfy((ms: number) => ms >= windowMs && ms <= windowMs * 1.1) as unknown,
});

let server: RecordingServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A pacer whose policy sends to a real server answering as `answer` says; `get(path)` is one GET through it. */
async function pacedOver(answer: (path: string) => Answer, maxWaitMs = 1_000) {
  const clock = manualClock();
  const pacer = new ReadPacer(clock, maxWaitMs);
  const s = await recordingServer((r) => answer(new URL(r.url, "http://x").pathname));
  server = s;
  const http = createDefaultHttpClient();
  const policy = pacer.policy();
  const get = (path: string): Promise<PipelineResponse> =>
    policy.sendRequest(
      createPipelineRequest({ url: `${s.url}${path}?api-version=2024-07-01`, allowInsecureConnection: true }),
      (req) => http.sendRequest(req),
    );
  return { clock, pacer, server: s, get };
}

describe("ARM read pacing", () => {
  it("lets a subscription's whole read bucket through at once, then one read per refill, each subscription apart", async () => {
    const clock = manualClock();
    const pacer = new ReadPacer(clock);
    const start = clock.now();
    for (let i = 0; i < READ_BUDGET.capacity; i++) await pacer.acquire(SUB);
    expect(clock.now()).toBe(start);
    await pacer.acquire(OTHER_SUB);
    expect(clock.now()).toBe(start);
    await pacer.acquire(SUB);
    expect(clock.now()).toBe(start + READ_BUDGET.refillIntervalMs);
  });

  it("plans on no more than ARM says is left of the bucket (every host's reads count in it)", async () => {
    const clock = manualClock();
    const pacer = new ReadPacer(clock);
    const start = clock.now();
    pacer.learnRemaining(SUB, 0);
    await pacer.acquire(SUB);
    expect(clock.now()).toBe(start + READ_BUDGET.refillIntervalMs);
  });

  it("fails a read at once as throttled, with the wait as its Retry-After, when the wait is longer than it may sleep", async () => {
    const clock = manualClock();
    const pacer = new ReadPacer(clock, 1_000);
    pacer.throttled(SUB, 30_000);
    const start = clock.now();
    expect(await refusal(pacer.acquire(SUB))).toEqual({ retryAfterMs: 30_000, why: "ARM's read budget" });
    expect(clock.now()).toBe(start);
    await expect(pacer.acquire(OTHER_SUB)).resolves.toBeUndefined();
  });

  it("lets the timer's background reads spend half of a CRP window, and a reconcile's read the rest", async () => {
    const clock = manualClock();
    const pacer = new ReadPacer(clock, 1_000);
    const spec = CRP_WINDOWS.HighCostGetVMScaleSet["3Min"]!;
    const half = Math.floor(spec.size / 2);
    await pacer.background(async () => {
      for (let i = 0; i < half; i++) await pacer.acquire(SUB, undefined, instances(`vmss-${i}`));
    });
    expect(await refusal(pacer.background(() => pacer.acquire(SUB, undefined, instances("one-more"))))).toEqual({
      ...windowWait(spec.windowMs),
      why: "the HighCostGetVMScaleSet3Min window",
    });
    for (let i = half; i < plannable(spec); i++) await pacer.acquire(SUB, undefined, instances(`vmss-${i}`));
    expect(await refusal(pacer.acquire(SUB, undefined, instances("past-plannable")))).toMatchObject({
      why: "the HighCostGetVMScaleSet3Min window",
    });
  });

  it("gives up a read waiting for its turn as soon as its request is aborted, as held by pacing (a wait, not a failure)", async () => {
    // A sleep that never ends on its own: only the abort can end the wait.
    const pacer = new ReadPacer({ now: () => 0, sleep: () => new Promise<void>(() => undefined) });
    pacer.throttled(SUB, 60_000);
    const abort = new AbortController();
    const waiting = pacer.acquire(SUB, abort.signal);
    abort.abort();
    // Never sent: what the pass makes of it is a wait, which never counts towards POOLSYNC_MAX_ATTEMPTS.
    const held = { name: "ThrottledError", code: OWN_PACING, retryAfterMs: 60_000 };
    await expect(waiting).rejects.toMatchObject(held);
    await expect(pacer.acquire(SUB, abort.signal)).rejects.toMatchObject(held);
    expect(comeBackOf(await waiting.catch((e: unknown) => e), 7)).toMatchObject({ cause: "wait", afterMs: 60_000 });
  });

  it("gives a read back as held when its deadline fires with the wait, though the budget has just refilled", async () => {
    // The sleep ends and the abort fires together (the request's timeout was the wait's length): sent now, the request
    // would fail as "already canceled", a failure of ARM's in the pass's eyes.
    const clock = manualClock(0);
    const abort = new AbortController();
    const pacer = new ReadPacer({
      now: () => clock.now(),
      sleep: (ms) => {
        clock.advance(ms);
        abort.abort();
        return Promise.resolve();
      },
    });
    pacer.throttled(SUB, 30_000);
    const refused = await pacer.acquire(SUB, abort.signal).catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: "ThrottledError", code: OWN_PACING });
    expect(comeBackOf(refused, 7)).toMatchObject({ cause: "wait" });
  });

  it("leaves the last tokens of ARM's read bucket to reads other than operation polls", async () => {
    // Any wait is refused at once, so each acquire says whether it would have waited.
    const pacer = new ReadPacer({ now: () => 0, sleep: () => Promise.resolve() }, 1);
    const poll = `/subscriptions/${SUB}/providers/Microsoft.Compute/locations/westeurope/operations/op-1`;
    pacer.learnRemaining(SUB, POLL_RESERVE + 1);
    await pacer.acquire(SUB, undefined, poll);
    // The reserve is all that is left: a poll waits, an instance LIST and a scale set GET go at once.
    await expect(pacer.acquire(SUB, undefined, poll)).rejects.toMatchObject({
      code: OWN_PACING,
      message: expect.stringContaining("kept for reads other than polls"),
    });
    await pacer.acquire(SUB, undefined, instances("vmss-a"));
    await pacer.acquire(SUB, undefined, scaleSet("vmss-a"));
  });

  it("refuses a read whose wait is longer than it may sleep, as held by pacing", async () => {
    const pacer = new ReadPacer({ now: () => 0, sleep: () => Promise.resolve() }, 5_000);
    pacer.throttled(SUB, 60_000);
    const refused = await pacer.acquire(SUB).catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: "ThrottledError", code: OWN_PACING, retryAfterMs: 60_000 });
    expect(comeBackOf(refused, 7)).toMatchObject({ cause: "wait" });
  });
});

describe("ARM read pacing, from the answers (real HTTP)", () => {
  it("a 429 naming a CRP window closes reads of that kind in that subscription only, until its Retry-After", async () => {
    const paced = await pacedOver((path) =>
      path === scaleSet("vmss-a")
        ? {
            status: 429,
            headers: { "retry-after": "30" },
            body: {
              error: {
                code: "OperationNotAllowed",
                details: [{ code: "TooManyRequests", target: "GetVMScaleSet30Min" }],
              },
            },
          }
        : { status: 200, body: {} },
    );
    expect((await paced.get(scaleSet("vmss-a"))).status).toBe(429);
    // Another scale set's GET is the same kind of read: refused here, never sent.
    expect(await refusal(paced.get(scaleSet("vmss-b")))).toEqual({
      retryAfterMs: 30_000,
      why: "an earlier 429's Retry-After",
    });
    expect((await paced.get(instances("vmss-b"))).status).toBe(200);
    // CRP's windows are each subscription's own: the same kind of read in another one goes out.
    const elsewhere = scaleSet("vmss-a").replace(/\/subscriptions\/[^/]+/, `/subscriptions/${OTHER_SUB}`);
    expect((await paced.get(elsewhere)).status).toBe(200);
    expect(paced.server.received.map((r) => new URL(r.url, "http://x").pathname)).toEqual([
      scaleSet("vmss-a"),
      instances("vmss-b"),
      elsewhere,
    ]);
    paced.clock.advance(30_000);
    expect((await paced.get(scaleSet("vmss-b"))).status).toBe(200);
  });

  it("a 429 naming no CRP window closes every read of the subscription, and no other subscription's", async () => {
    const paced = await pacedOver((path) =>
      path === nic("nic-0")
        ? { status: 429, headers: { "retry-after": "20" }, body: { error: { code: "TooManyRequests" } } }
        : { status: 200, body: {} },
    );
    expect((await paced.get(nic("nic-0"))).status).toBe(429);
    expect(await refusal(paced.get(instances("vmss-a")))).toEqual({ retryAfterMs: 20_000, why: "ARM's read budget" });
    expect((await paced.get(`/subscriptions/${OTHER_SUB}/resourceGroups/rg`)).status).toBe(200);
  });

  it("counts what CRP says is left of a window as spent by other hosts", async () => {
    const paced = await pacedOver(() => ({
      status: 200,
      body: {},
      headers: {
        "x-ms-ratelimit-remaining-resource":
          "Microsoft.Compute/GetVMScaleSet3Min;0,Microsoft.Compute/GetVMScaleSet30Min;900",
      },
    }));
    expect((await paced.get(scaleSet("vmss-a"))).status).toBe(200);
    expect(await refusal(paced.get(scaleSet("vmss-b")))).toEqual({
      ...windowWait(CRP_WINDOWS.GetVMScaleSet["3Min"]!.windowMs),
      why: "the GetVMScaleSet3Min window",
    });
    expect(paced.server.received).toHaveLength(1);
  });

  it("reads the policies a 429 names from its details, top-level or under error, and nothing else", () => {
    const detail = (target: unknown) => ({ code: "TooManyRequests", target });
    expect(namedBuckets(JSON.stringify({ details: [detail("GetVMScaleSet3Min")] }))).toEqual(["GetVMScaleSet3Min"]);
    expect(
      namedBuckets(
        JSON.stringify({
          error: { details: [detail("Microsoft.Compute/HighCostGet30Min"), detail(7), detail("a b")] },
        }),
      ),
    ).toEqual(["Microsoft.Compute/HighCostGet30Min"]);
    expect(namedBuckets(JSON.stringify({ error: { code: "TooManyRequests" } }))).toEqual([]);
    expect(namedBuckets("<html>")).toEqual([]);
    expect(namedBuckets(undefined)).toEqual([]);
  });
});
