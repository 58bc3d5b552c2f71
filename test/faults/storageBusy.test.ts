import { afterEach, describe, expect, it } from "vitest";
import { groupsWorld, groupsWorldIds, poolId, WIDE_SUBSCRIPTION } from "../../devkit/worlds";
import { testStorageConnectionString } from "../../devkit/storage";
import { instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import type { ScaleSetRef } from "../../src/core/resourceIds";
import { REMOVED_RETENTION_MS } from "../../src/azure/targets/declarationRows";
import { manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { startTableCounter, type TableCounter, type TableFault } from "../support/tableCounter";

/**
 * Storage that is busy or slow (issue 41): a Table front end answering 503 ServerBusy more often than the SDK retries,
 * or taking a request and answering after the client gave up on it, on each HTTP verb the app sends. Whatever was cut
 * short, each declaration ends applied in ARM and reported so, every lease ends free and the queue empties: nothing
 * is stuck. The SDK's retry backoff (about 7 s for four 503s) is real time, hence real-waiting.
 *
 * One day of two scale sets of a group covers every verb: declarations and passes (GET, POST, PUT), a reconcile
 * whose group LIST refreshes its neighbour's row (PATCH), and the timer dropping the mark of an absent applied
 * everywhere a week later (DELETE).
 */

const VERBS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
/** One more than the SDK's three retries: the call fails into the app. */
const BUSY_ANSWERS = 4;
/** Long enough for a loaded Azurite to answer what is not held back. */
const TIMEOUT_S = 3;
const TTL_MS = 600_000;
const [A, B] = groupsWorldIds([2]).map(scaleSetRef) as [ScaleSetRef, ScaleSetRef];
const pool = poolId(WIDE_SUBSCRIPTION, A.resourceGroup, "lb", "pool-0");
const declare = (ref: ScaleSetRef, state: "present" | "absent") => ({
  v: 1,
  kind: "declare",
  scaleSetId: ref.id,
  backendPoolId: pool,
  state,
});

let h: Harness | undefined;
let hop: TableCounter | undefined;
afterEach(async () => {
  await h?.stop();
  await hop?.stop();
  h = hop = undefined;
});

/** Misbehaves for the next `count` requests of `verb`; answers how many it has not met yet. */
function armFault(t: TableCounter, verb: string, fault: TableFault, count: number): () => number {
  let left = count;
  t.fault = ({ method }) => {
    if (method !== verb || left === 0) return undefined;
    left--;
    return fault;
  };
  return () => left;
}

async function start() {
  const storage = testStorageConnectionString();
  const t = await startTableCounter(/TableEndpoint=([^;]+)/.exec(storage)![1]!);
  const clock = manualClock();
  const harness = await startHarness({
    clock,
    cacheEnabled: true,
    sim: { seed: groupsWorld([2], 2) },
    hostQueues: { visibilityTimeoutMs: 0 },
    env: {
      POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`,
      AzureWebJobsStorage: storage.replace(/TableEndpoint=[^;]+/, `TableEndpoint=${t.endpoint}`),
      POOLSYNC_TABLE_TIMEOUT_SECONDS: String(TIMEOUT_S),
    },
  });
  return { h: harness, hop: t, clock };
}

/** "removed": no declaration left to show; "purged": the removal mark is gone from the table too. */
type Wanted = "present" | "absent" | "removed" | "purged";

/** Whether the target's declarations are all applied as `state` (none: removed) and its lease is free. */
async function settled(harness: Harness, ref: ScaleSetRef, state: Wanted) {
  const decls = await harness.services.declarations.listForTarget(ref);
  const control = await harness.services.store.readControl(ref);
  if (control.state.lease.holder !== "") return false;
  if (state === "removed") return decls.length === 0;
  if (state === "purged")
    return decls.length === 0 && (await harness.services.store.readTarget(ref)).removed.size === 0;
  return decls.length === 1 && decls[0]!.state === state && decls[0]!.outcome.kind === "applied";
}

/**
 * Plays the queue and, while a target is not settled, the timer a stuck-pending wait later: what a deployed app does
 * on its own, with nobody retrying by hand.
 */
async function settle(harness: Harness, clock: ReturnType<typeof manualClock>, want: Array<[ScaleSetRef, Wanted]>) {
  for (let round = 0; round < 6; round++) {
    await harness.drainUntilEmpty(60_000);
    const done = await Promise.all(want.map(([ref, state]) => settled(harness, ref, state)));
    if (done.every(Boolean)) return;
    clock.advance(11 * 60_000);
    await harness.services.reconcileStale().catch(() => undefined); // a run storage cut short: the next one goes on
  }
  throw new Error(`not settled after 6 timer rounds: ${JSON.stringify(want.map(([r, s]) => [r.id, s]))}`);
}

function poolsInArm(harness: Harness, ref: ScaleSetRef): string[][] {
  const ss = harness.sim.control.resource(ref.id)!;
  return [
    poolsByIpConfig(modelNics(ss)).ipConfig0 ?? [],
    ...harness.sim.control.instances(ref.id).map((vm) => poolsByIpConfig(instanceNics(vm)).ipConfig0 ?? []),
  ];
}

describe("Table storage busy or slow on each verb: nothing stuck", () => {
  const cases = VERBS.flatMap((verb) => [
    [verb, "busy", { kind: "busy" }, BUSY_ANSWERS] as const,
    [verb, "slow", { kind: "slow", ms: (TIMEOUT_S + 1) * 1000 }, 1] as const,
  ]);
  it.each(cases)("%s %s: each declaration reaches ARM and is reported applied", async (verb, _kind, fault, count) => {
    const started = await start();
    ({ h, hop } = started);
    const { clock } = started;
    const left = armFault(hop, verb, fault, count);

    await h.send(declare(A, "present"));
    await h.send(declare(B, "present"));
    await settle(h, clock, [
      [A, "present"],
      [B, "present"],
    ]);
    // Both models past the TTL: A's reconcile reads its group by one LIST and refreshes B's row with it.
    clock.advance(TTL_MS + 1);
    await h.send({ v: 1, kind: "reconcile", scaleSetId: A.id, reason: "test: models due", attempt: 1 });
    await h.drainUntilEmpty(60_000);
    // The timer removes an absent once it holds everywhere.
    await h.send(declare(A, "absent"));
    await settle(h, clock, [
      [A, "removed"],
      [B, "present"],
    ]);
    // A week on, the timer drops the removal mark (the one DELETE outside a transaction).
    clock.advance(REMOVED_RETENTION_MS);
    await settle(h, clock, [
      [A, "purged"],
      [B, "present"],
    ]);

    expect(left()).toBe(0); // the app met every fault armed
    expect(poolsInArm(h, A).every((pools) => !pools.includes(pool.toLowerCase()))).toBe(true);
    expect(poolsInArm(h, B).every((pools) => pools.includes(pool.toLowerCase()))).toBe(true);
    expect(await h.poisonMessages()).toEqual([]);
  });
});
