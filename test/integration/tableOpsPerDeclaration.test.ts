import { afterEach, describe, expect, it } from "vitest";
import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { startHarness, type Harness } from "../support/harness";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";
import { instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";

const VMSS = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
const POOLS = Array.from({ length: 2 }, (_, i) => poolId(WIDE_SUBSCRIPTION, "wide", "lb", `pool-${i}`));

/** What a Table request did: its method, and the partition it went to when its URL or its body names one. */
interface Seen {
  method: string;
  batch: boolean;
  history: boolean;
  /** A read of the scale set's declare window row. */
  windowRead: boolean;
}

/**
 * Table round trips of one declaration, counted by a pipeline policy on real Azurite, on the whole path: the declare
 * message (cap check, store, history, window), its leading reconcile (window, lease, reads, writes and their cache
 * rows, outcomes, history, release). A scale set of three instances, warm: a second pool after a first.
 */
describe("Table round trips of a declaration (issue 30)", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("writes to one scale set's rows in the same turn share a transaction; a pass's history is one transaction; the lease is let go on its own ETag", async () => {
    const seen: Seen[] = [];
    const policy: PipelinePolicy = {
      name: "countTable",
      sendRequest: (req, next) => {
        const body = typeof req.body === "string" ? req.body : "";
        seen.push({
          method: req.method,
          batch: new URL(req.url).pathname.endsWith("$batch"),
          history: body.includes("~history") || decodeURIComponent(req.url).includes("~history"),
          windowRead: req.method === "GET" && decodeURIComponent(req.url).includes("'~windows'"),
        });
        return next(req);
      },
    };
    h = await startHarness({
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 3, pools: 2 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`, POOLSYNC_DECLARE_WINDOW_SECONDS: "2" },
      storagePolicies: [policy],
    });
    await h.send({ v: 1, kind: "declare", scaleSetId: VMSS, backendPoolId: POOLS[0], state: "present" });
    await h.drainUntilEmpty(30_000);
    // Quiet again (no window for twice its length): the next declaration leads, as a lone change does.
    await new Promise((r) => setTimeout(r, 4_500));
    seen.length = 0;
    await h.send({ v: 1, kind: "declare", scaleSetId: VMSS, backendPoolId: POOLS[1], state: "present" });
    const outcomes = await h.drainUntilEmpty(30_000);
    expect(outcomes.map((o) => o.result)).toEqual(["reconciled"]);

    const path = seen.splice(0);
    const c = h.sim.control;
    const wanted = POOLS.map((p) => p.toLowerCase()).sort();
    expect([...poolsByIpConfig(modelNics(c.resource(VMSS)!)).ipConfig0!].sort()).toEqual(wanted);
    for (const vm of c.instances(VMSS))
      expect([...poolsByIpConfig(instanceNics(vm)).ipConfig0!].sort()).toEqual(wanted);
    // The pass's four writes (model, three instances) are in the history, with the declaration.
    const history = await h.services.history.page(VMSS, 50);
    expect(history.entries.filter((e) => e.kind === "write")).toHaveLength(8);
    expect(history.entries.filter((e) => e.kind === "declaration")).toHaveLength(2);

    // History: the declaration's entry (intake) and one transaction for the pass's four writes, not five inserts.
    expect(path.filter((s) => s.history)).toHaveLength(2);
    // The instances' cache rows, marked together before their writes and the outcomes: transactions, not one each.
    expect(path.filter((s) => s.batch).length).toBeGreaterThanOrEqual(2);
    // The window row is read once, by the claim: the pass that leads at once does not look again for a window behind it.
    expect(path.filter((s) => s.windowRead)).toHaveLength(1);
    // 32 round trips before issue 30's changes (c157e0d), 20–24 with the transactions (load moves a group's membership
    // by one or two: concurrent writes that land in different turns go alone), 19–22 without the model's store as read
    // and the leading pass's second look at its window.
    expect(path.length).toBeLessThanOrEqual(22);
  }, 120_000);
});
