import type { QueueClient } from "@azure/storage-queue";
import { DEMO_SUBSCRIPTION, type JsonObject, type SimControl } from "../../sim";
import { addNicPool, modelNics, nicPoolsByIpConfig, poolsByIpConfig, stalePut } from "../../sim/wire";
import type { TargetDeclarations } from "../../src/azure/targets/targetDeclarations";
import type { StoredDeclaration } from "../../src/core/declarations";
import { parseTargetId } from "../../src/core/resourceIds";

/**
 * `npm run demo -- --flex`: the same race on a Flexible scale set, where an existing VM's membership lives on its
 * NIC resource (Network RP: weak ETags, a PUT replaces the NIC whole). Another writer read VM 0's NIC before us and
 * PUTs its stale copy, with its own IPv6 pool, without If-Match, just between poolsync's read and write. poolsync's
 * If-Match write gets 412, it re-reads the NIC and retries: the other writer's pool and ours both end up on the NIC.
 */

const RG = `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/etag/providers`;
const FLEX = `${RG}/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-flex-0`;
const POOL = `${RG}/Microsoft.Network/loadBalancers/etag-k8s/backendAddressPools/etag-k8s`;
const V6_POOL = `${RG}/Microsoft.Network/loadBalancers/etag-k8s/backendAddressPools/etag-k8s-v6`;

export interface FlexRaceContext {
  sim: SimControl;
  runtimeUrl: string;
  declarations: TargetDeclarations;
  workQueue: QueueClient;
  queueName: string;
  via: "api" | "queue";
  out: (line: string) => void;
  check: (ok: boolean, what: string) => void;
  quiet: () => Promise<void>;
  appLog: Record<string, unknown>[];
}

async function waitFor<T>(
  what: string,
  probe: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const short = (id: string) =>
  id.replace(/^.*\/(loadBalancers|networkInterfaces)\//i, "").replace(/\/backendAddressPools\//i, "/");

export async function flexRace(c: FlexRaceContext): Promise<void> {
  const { sim, out, check } = c;
  const target = parseTargetId(FLEX);
  if (!target.ok) throw new Error(target.reason);
  const nicIds = () =>
    sim
      .virtualMachines(FLEX)
      .map(
        (vm) =>
          (
            (vm["properties"] as { networkProfile: { networkInterfaces: { id: string }[] } }).networkProfile
              .networkInterfaces[0] as { id: string }
          ).id,
      );
  const fmt = (m: Record<string, string[]>) =>
    Object.entries(m)
      .map(([ip, pools]) => `${ip}→[${pools.map(short).join(",")}]`)
      .join(" ");
  const show = (label: string) => {
    const nics = nicIds().map((id) => nicPoolsByIpConfig(sim.resource(id) as JsonObject));
    out(
      `  ${label}: model ${fmt(poolsByIpConfig(modelNics(sim.resource(FLEX) as JsonObject)))}; ${nics.map((n, i) => `vm${i} NIC ${fmt(n)}`).join("; ")}`,
    );
    return nics;
  };

  out("\n1. The world before: a Flexible scale set of two VMs, each with one dual-stack NIC; nobody is in the pool.");
  show("before");
  const [nic0] = nicIds() as [string];

  out(
    `\n2. Another writer read ${short(nic0)} a while ago; it will PUT its stale copy, with its own IPv6 pool, without`,
  );
  out("   If-Match, just between poolsync's read of that NIC and its write (a NIC PUT replaces the whole NIC).");
  const stale = sim.resource(nic0) as JsonObject;
  const race = sim.beforeNextWrite(nic0, stalePut(stale, addNicPool("ipConfig0-v6", V6_POOL)));
  sim.resetStats();

  const body = { targetId: FLEX, backendPoolId: POOL, state: "present" };
  out(
    `\n3. Declare pool etag-k8s present on etag-k8s-flex-0 (targetId; via ${c.via === "api" ? "PUT /api/memberships" : "a declare message on the queue"}).`,
  );
  if (c.via === "api") {
    const res = await fetch(`${c.runtimeUrl}/api/memberships`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    out(`  PUT /api/memberships → ${res.status} ${text.slice(0, 160)}`);
    if (res.status !== 202) throw new Error(`PUT /api/memberships answered ${res.status}, not 202: ${text}`);
  } else {
    const message = { v: 1, kind: "declare", ...body, requestId: `demo-flex-${Date.now()}` };
    await c.workQueue.sendMessage(Buffer.from(JSON.stringify(message), "utf8").toString("base64"));
    out(`  queue ${c.queueName} ← ${JSON.stringify(message)}`);
  }
  const mine = (rows: StoredDeclaration[]) => rows.find((d) => d.backendPoolId.toLowerCase() === POOL.toLowerCase());
  const rows = await waitFor(
    "the declaration to be applied",
    () => c.declarations.listForTarget(target.value),
    (r) => (mine(r)?.outcome.kind ?? "pending") !== "pending",
  );
  await c.quiet();
  const d = mine(rows);
  out(`  declaration outcome: ${d?.outcome.kind ?? "?"}${d?.outcome.reason ? ` (${d.outcome.reason})` : ""}`);
  check(d?.outcome.kind === "applied", "the declaration is applied");
  const after = show("after");
  const st = sim.stats(nic0);
  out(
    `  ${short(nic0)}: ${st.nicGets} GET, ${st.nicPuts} PUT, 412 ×${st.status412}; scale set model: ${sim.stats(FLEX).puts} PUT`,
  );
  check(race.applied() === 1, "the other writer's stale NIC PUT landed between poolsync's read and write");
  check(
    st.status412 === 1,
    "poolsync's If-Match write on the NIC was refused once (412); it re-read the NIC and retried",
  );
  const p = POOL.toLowerCase();
  const v6 = V6_POOL.toLowerCase();
  check(
    JSON.stringify(after[0]) === JSON.stringify({ ipConfig0: [p], "ipConfig0-v6": [v6] }),
    "VM 0's NIC: our pool on ipConfig0 and the other writer's IPv6 pool both survive",
  );
  check(JSON.stringify(after[1]) === JSON.stringify({ ipConfig0: [p], "ipConfig0-v6": [] }), "VM 1's NIC: in the pool");
  check(
    JSON.stringify(poolsByIpConfig(modelNics(sim.resource(FLEX) as JsonObject))) ===
      JSON.stringify({ ipConfig0: [p], "ipConfig0-v6": [] }),
    "the model (for VMs to come) has the pool too",
  );
  check(sim.poolMembers(POOL).length === 2, "the load balancer's pool lists both VMs' NIC ip configurations");
  const events = c.appLog.filter((e) => e.event === "event");
  out(
    `\nEvents: ${events.filter((e) => e.outcome === "own-write").length} recognised as poolsync's own writes, ${events.filter((e) => String(e.outcome).startsWith("invalidated")).length} invalidated the cache.`,
  );
  check(
    c.appLog.every((e) => e.event !== "message.poisoned" && e.event !== "message.refused"),
    "no message was poisoned",
  );
}
