// IP-based pools (issue 43): contention on one pool and a burst of declarations on it, poolsync beside its peers'
// strategies, each against its own fresh simulator with the same seed, one after another in one run:
//   npm run bench -- --only=ipPools
// (runs only when named; its figures go to bench/ipPools.json and its own section of RESULTS.md). At 1x, real time.
// poolsync runs in-process (its services over the shared Azurite, as the integration tests run it: each change is a
// stored declaration and a pass of its target, a pass that asks to come back comes back after its delay); the peers
// use the real NetworkManagementClient: last-writer-wins (GET, edit, PUT without If-Match) and get-then-put-if-match
// (GET, edit, PUT with If-Match, on 412 again). Three other writers add and remove addresses of their own on the same
// pool all along, each with If-Match, each logged. Lost, ours: targets whose last declared state the pool does not
// show at the end; lost, theirs: logged adds that vanished and removes that came back.
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../src/config";
import { createServices, type Services } from "../src/app/services";
import { memoryLogger } from "../src/app/logger";
import { QUEUE_DECLARER, type Declaration } from "../src/core/declarations";
import { parseTargetId, type TargetRef } from "../src/core/resourceIds";
import { startArmSimulator, type ArmSimulator, type JsonObject } from "../sim";
import { simNetworkClient } from "../sim/networkClient";
import { KINDS, KINDS_RG, KINDS_SUBSCRIPTION, poolKindWorld } from "../devkit/poolKindWorld";
import { uniqueName } from "../devkit/storage";
import { SIM_CA_FILE } from "../devkit/simulator";
import { measuredCommit } from "./measuredCommit";
import { writeMarkedSection } from "./markedSection";

type Strategy = "poolsync" | "last-writer-wins" | "get-then-put-if-match";
const STRATEGIES: Strategy[] = ["poolsync", "last-writer-wins", "get-then-put-if-match"];
const POOL = KINDS.ipPool;

interface Change {
  target: number;
  state: "present" | "absent";
  atMs: number;
}

export interface IpPoolsSize {
  /** Declarations in the contention workload, one every 150 ms. */
  changes: number;
  /** VMs they are spread over. */
  targets: number;
  /** Other writers adding and removing addresses of their own. */
  writers: number;
  /** Each other writer's pause between its writes, ms: the contention runs once per gap. With NRP's writes taking
   *  100 ms, 3 writers every 150 ms keep a write running on the load balancer about all the time (its 409s); every
   *  1000 ms, about a third of it. */
  writerGapsMs: number[];
  /** VMs declared into the pool at once in the burst. */
  burst: number;
}

export const IP_POOLS_SIZE: IpPoolsSize = {
  changes: 60,
  targets: 20,
  writers: 3,
  writerGapsMs: [150, 1000],
  burst: 50,
};

interface BurstFigures {
  strategy: Strategy;
  held: number;
  poolWrites: number;
  poolReads: number;
  status412: number;
  status409: number;
  seconds: number;
}

export interface IpPoolsResult {
  generatedAt: string;
  commit: string;
  node: string;
  machine: { cpus: number; platform: string };
  size: IpPoolsSize;
  contention: Figures[];
  burst: BurstFigures[];
  durationS: number;
}

interface Figures {
  strategy: Strategy;
  writerGapMs: number;
  /** What each target lost at the end shows as its declaration's outcome (poolsync), counted by kind and reason. */
  lostOutcomes: Record<string, number>;
  lostOurs: number;
  lostTheirs: number;
  theirOps: number;
  poolWrites: number;
  status412: number;
  status409: number;
  seconds: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function changesOf(n: number, targets: number, gapMs: number, seed = 7): Change[] {
  let x = seed;
  const rand = () => (x = (x * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const state = new Map<number, "present" | "absent">();
  return Array.from({ length: n }, (_, i) => {
    const target = Math.floor(rand() * targets);
    const next = state.get(target) === "present" ? "absent" : "present";
    state.set(target, next);
    return { target, state: next, atMs: i * gapMs };
  });
}

async function startWorld(vms: number): Promise<ArmSimulator> {
  return startArmSimulator({
    // https, as Azure: the app's SDK clients send a bearer token only over TLS (the simulator's test certificate).
    tls: true,
    seed: poolKindWorld({ vms }),
    operationDurationMs: 100,
    latency: { fixedMs: 10, jitterMs: 20 },
  });
}

const vmAddress = (sim: ArmSimulator, i: number): string => {
  const nic = sim.control.resource(
    `${KINDS.vm(i).replace(/Microsoft\.Compute\/virtualMachines\/vm-\d+$/, "")}Microsoft.Network/networkInterfaces/vm-${i}-nic`,
  );
  const ipc = ((nic?.["properties"] as JsonObject)["ipConfigurations"] as JsonObject[])[0]!;
  return String((ipc["properties"] as JsonObject)["privateIPAddress"]);
};

/** Another writer: adds an address of its own, and removes the one it added two steps before, each with If-Match. */
function otherWriter(sim: ArmSimulator, k: number, gapMs: number) {
  const live = new Set<string>();
  const removed = new Set<string>();
  let ops = 0;
  let stop = false;
  const run = (async () => {
    for (let n = 0; !stop; n++) {
      const name = `writer${k}-${n}`;
      const old = `writer${k}-${n - 2}`;
      const remove = n >= 2 && live.has(old) ? [old] : [];
      for (let tries = 0; tries < 50 && !stop; tries++) {
        const etag = sim.control.poolState(POOL)?.etag;
        try {
          sim.control.writePoolAddresses(
            POOL,
            { add: [{ name, ipAddress: `10.1.${240 + k}.${(n % 250) + 1}` }], remove },
            etag ? { ifMatch: etag } : {},
          );
          live.add(name);
          for (const r of remove) {
            live.delete(r);
            removed.add(r);
          }
          ops++;
          break;
        } catch {
          await sleep(20 + Math.random() * 30); // 409 while another write runs, or 412: read again
        }
      }
      await sleep(gapMs);
    }
  })();
  return {
    stop: async () => {
      stop = true;
      await run;
    },
    lost: () => {
      const names = new Set((sim.control.poolState(POOL)?.addresses ?? []).map((a) => a.name));
      return [...live].filter((n) => !names.has(n)).length + [...removed].filter((n) => names.has(n)).length;
    },
    ops: () => ops,
  };
}

interface Runner {
  apply(c: Change): Promise<void>;
  /** Is target i in the pool, as this strategy names its address? */
  holds(i: number): boolean;
  /** Target i's outcome as the strategy recorded it, if it records one. */
  outcome?(i: number): Promise<string>;
  close(): Promise<void>;
}

async function poolsyncRunner(sim: ArmSimulator, storage: string): Promise<Runner> {
  const config = loadConfig({
    POOLSYNC_SCOPES: `/subscriptions/${KINDS_SUBSCRIPTION}`,
    POOLSYNC_BINDINGS: "*",
    ARM_ENDPOINT: sim.url,
    POOLSYNC_ARM_CA_FILE: SIM_CA_FILE,
    AzureWebJobsStorage: storage,
    POOLSYNC_QUEUE: uniqueName("q-"),
    POOLSYNC_MEMBERSHIPS_TABLE: uniqueName("m"),
    POOLSYNC_CACHE_TABLE: uniqueName("c"),
    POOLSYNC_OPERATION_POLL_SECONDS: "0.05",
    POOLSYNC_DECLARE_WINDOW_SECONDS: "2",
  });
  const s: Services = createServices(config, { log: memoryLogger() });
  await s.ready();
  let seq = 0;
  const refOf = (i: number): TargetRef => {
    const r = parseTargetId(KINDS.vm(i));
    if (!r.ok) throw new Error(r.reason);
    return r.value;
  };
  return {
    async apply(c) {
      const ref = refOf(c.target);
      const d: Declaration = {
        scaleSetId: ref.id,
        backendPoolId: POOL,
        ipConfiguration: "",
        state: c.state,
        declaredAt: new Date(Date.now() + seq).toISOString(),
        requestId: `bench-${++seq}`,
        declaredBy: QUEUE_DECLARER,
      };
      await s.declarations.upsert(ref, d);
      for (let attempt = 0; attempt < 30; attempt++) {
        const r = await s.reconcile(ref, { reason: "declare", attempt });
        if (r.result === "deferred") {
          await sleep(200);
          continue;
        }
        if (r.requeueAfterMs === undefined) return;
        await sleep(Math.min(r.requeueAfterMs, 2_000));
      }
    },
    holds(i) {
      const vm = `vm-${i}`;
      return (sim.control.poolState(POOL)?.addresses ?? []).some(
        (a) => a.name?.startsWith("poolsync-") && a.name.endsWith(`-${vm}`),
      );
    },
    close: async () => {
      await s.coalescer.idle();
    },
    async outcome(i) {
      const [d] = await s.declarations.listForTarget(refOf(i));
      if (!d) return "no declaration";
      // The reason up to its first colon: "gave up after 8 re-enqueued attempts", without IDs and ETags.
      return d.outcome.kind === "failed" ? `failed: ${(d.outcome.reason ?? "").split(":")[0]}` : d.outcome.kind;
    },
  };
}

function peerRunner(sim: ArmSimulator, ifMatch: boolean): Runner {
  const client = simNetworkClient(sim, KINDS_SUBSCRIPTION, { retryOptions: { maxRetries: 0 } });
  const addresses = new Map<number, string>();
  const addressOf = (i: number) => addresses.get(i) ?? (addresses.set(i, vmAddress(sim, i)), addresses.get(i)!);
  const name = (i: number) => `peer-vm-${i}`;
  return {
    async apply(c) {
      for (let tries = 0; tries < 200; tries++) {
        const pool = await client.loadBalancerBackendAddressPools.get(KINDS_RG, "lb", "ips");
        const list = (pool.loadBalancerBackendAddresses ?? []).filter((a) => a.name !== name(c.target));
        const next = c.state === "present" ? [...list, { name: name(c.target), ipAddress: addressOf(c.target) }] : list;
        try {
          await client.loadBalancerBackendAddressPools.createOrUpdate(
            KINDS_RG,
            "lb",
            "ips",
            { ...pool, loadBalancerBackendAddresses: next },
            {
              updateIntervalInMs: 20,
              ...(ifMatch && pool.etag ? { requestOptions: { headers: { "if-match": pool.etag } } } : {}),
            },
          );
          return;
        } catch (err) {
          const status = (err as { statusCode?: number }).statusCode;
          if (status !== 412 && status !== 409 && status !== 429) throw err;
          await sleep(status === 412 ? 10 : 100);
        }
      }
    },
    holds(i) {
      return (sim.control.poolState(POOL)?.addresses ?? []).some((a) => a.name === name(i));
    },
    close: () => Promise.resolve(),
  };
}

async function contention(
  strategy: Strategy,
  storage: string,
  opts: IpPoolsSize,
  writerGapMs: number,
): Promise<Figures> {
  const sim = await startWorld(opts.targets);
  const runner =
    strategy === "poolsync" ? await poolsyncRunner(sim, storage) : peerRunner(sim, strategy !== "last-writer-wins");
  sim.control.resetStats();
  const writers = Array.from({ length: opts.writers }, (_, k) => otherWriter(sim, k, writerGapMs));
  const changes = changesOf(opts.changes, opts.targets, 150);
  const started = Date.now();
  const last = new Map<number, "present" | "absent">();
  const work: Promise<void>[] = [];
  // Changes of one target in order (a declaration replaces its predecessor), targets concurrently.
  const chains = new Map<number, Promise<void>>();
  for (const c of changes) {
    await sleep(Math.max(0, started + c.atMs - Date.now()));
    last.set(c.target, c.state);
    const next = (chains.get(c.target) ?? Promise.resolve()).then(() => runner.apply(c));
    chains.set(c.target, next);
    work.push(next);
  }
  await Promise.all(work);
  for (const w of writers) await w.stop();
  await runner.close();
  sim.control.settle();
  const seconds = (Date.now() - started) / 1000;
  const lost = [...last].filter(([i, s]) => runner.holds(i) !== (s === "present"));
  const lostOutcomes: Record<string, number> = {};
  for (const [i] of lost) {
    // A row read past its timeout on a loaded machine is that change's outcome unknown, not the run's end.
    const o = (await runner.outcome?.(i).catch((err: unknown) => `unread: ${(err as Error)?.name}`)) ?? "not recorded";
    lostOutcomes[o] = (lostOutcomes[o] ?? 0) + 1;
  }
  const lostOurs = lost.length;
  const stats = sim.control.stats(KINDS.loadBalancer);
  const figures: Figures = {
    strategy,
    writerGapMs,
    lostOutcomes,
    lostOurs,
    lostTheirs: writers.reduce((n, w) => n + w.lost(), 0),
    theirOps: writers.reduce((n, w) => n + w.ops(), 0),
    poolWrites: stats.networkPuts,
    status412: sim.control.stats().status412,
    status409: sim.control.stats().status409,
    seconds,
  };
  await sim.stop();
  return figures;
}

async function burst(strategy: Strategy, storage: string, n: number): Promise<BurstFigures> {
  const sim = await startWorld(n);
  const runner =
    strategy === "poolsync" ? await poolsyncRunner(sim, storage) : peerRunner(sim, strategy !== "last-writer-wins");
  sim.control.resetStats();
  const started = Date.now();
  await Promise.all(Array.from({ length: n }, (_, i) => runner.apply({ target: i, state: "present", atMs: 0 })));
  await runner.close();
  sim.control.settle();
  const seconds = (Date.now() - started) / 1000;
  const held = Array.from({ length: n }, (_, i) => runner.holds(i)).filter(Boolean).length;
  const figures: BurstFigures = {
    strategy,
    held,
    poolWrites: sim.control.stats(KINDS.loadBalancer).networkPuts,
    poolReads: sim.control.stats(KINDS.loadBalancer).networkGets,
    status412: sim.control.stats().status412,
    status409: sim.control.stats().status409,
    seconds,
  };
  await sim.stop();
  return figures;
}

export async function runIpPools(
  storage: string,
  size: IpPoolsSize,
  log: (line: string) => void,
): Promise<IpPoolsResult> {
  const started = Date.now();
  const contentionFigures: Figures[] = [];
  for (const gap of size.writerGapsMs)
    for (const s of STRATEGIES) {
      const f = await contention(s, storage, size, gap);
      contentionFigures.push(f);
      log(
        `ipPools contention ${s}, writers every ${gap} ms: lost ours ${f.lostOurs}, theirs ${f.lostTheirs}/${f.theirOps}, pool PUTs ${f.poolWrites}, 412 ${f.status412}, 409 ${f.status409}, ${f.seconds.toFixed(1)} s`,
      );
    }
  const burstFigures: BurstFigures[] = [];
  for (const s of STRATEGIES) {
    const f = await burst(s, storage, size.burst);
    burstFigures.push(f);
    log(
      `ipPools burst ${s}: ${f.held}/${size.burst} in the pool, pool PUTs ${f.poolWrites}, reads ${f.poolReads}, 412 ${f.status412}, 409 ${f.status409}, ${f.seconds.toFixed(1)} s`,
    );
  }
  return {
    generatedAt: new Date().toISOString(),
    commit: measuredCommit(),
    node: process.version,
    machine: { cpus: os.cpus().length, platform: `${os.platform()} ${os.arch()}` },
    size,
    contention: contentionFigures,
    burst: burstFigures,
    durationS: (Date.now() - started) / 1000,
  };
}

const MARK_START = "<!-- ipPools:start -->";
const MARK_END = "<!-- ipPools:end -->";
const verdict = (ok: boolean) => (ok ? "met" : "**missed**");

export function renderIpPools(r: IpPoolsResult): string {
  const burstOurs = r.burst.find((f) => f.strategy === "poolsync");
  const lostText = (f: Figures) =>
    Object.entries(f.lostOutcomes ?? {})
      .map(([o, n]) => `${n} ${o}`)
      .join("; ");
  const lines = [
    MARK_START,
    "## 1b. Contention and a burst on one IP-based pool (issue 43)",
    "",
    `\`npm run bench -- --only=ipPools\` at ${r.generatedAt} on commit ${r.commit}, ${r.durationS.toFixed(0)} s real, Node ${r.node}, ${r.machine.cpus} CPUs (${r.machine.platform}) shared with other work, one run; every strategy against its own fresh simulator with the same seed (\`devkit/poolKindWorld\`: a load balancer whose pool \`ips\` is IP-based, ${r.size.targets} VMs), one after another. **Real** seconds at 1× (not the time-scaled simulation of section 1): NRP writes take 100 ms, every request 10–30 ms. The pool's ETag is its load balancer's, and the simulator answers 409 AnotherOperationInProgress to a write while another runs on the same load balancer, as NRP does.`,
    "",
    `Contention: ${r.size.changes} declarations, one every 150 ms, over ${r.size.targets} VMs (each VM's changes in order, VMs at once; add and remove alternate per VM); ${r.size.writers} other writers each add an address of their own every *gap* ms and remove the one they added two steps before, with If-Match (a write of the pool through the simulator's control, logged once it succeeded), once with each gap. poolsync: each change a stored declaration and its target's pass, a pass that asks to come back coming back after its delay (at most 2 s), until a pass asks nothing more; addresses named \`poolsync-…\`. The peers, over the real \`NetworkManagementClient\`: \`last-writer-wins\` GETs the pool and PUTs it edited without If-Match; \`get-then-put-if-match\` does the same with If-Match and starts again on 412; both start again on 409 (100 ms later), up to 200 times. Lost, ours: VMs whose last declared state the pool does not show at the end (for poolsync, with what its declaration's outcome says). Lost, theirs: logged adds that vanished and removes that came back. Pool PUTs count every PUT of the pool that reached the simulator, refused ones (409, 412) included; the other writers' are not counted.`,
    "",
    "| strategy | writers' gap ms | lost (ours) | lost (theirs) | their ops | pool PUTs | 412 | 409 | real s | lost (ours): outcome |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...r.contention.map(
      (f) =>
        `| \`${f.strategy}\` | ${f.writerGapMs} | ${f.lostOurs} | ${f.lostTheirs} | ${f.theirOps} | ${f.poolWrites} | ${f.status412} | ${f.status409} | ${f.seconds.toFixed(1)} | ${lostText(f) || "–"} |`,
    ),
    "",
    `Burst: ${r.size.burst} VMs declared into the one IP-based pool at once (poolsync, default settings but a 2 s declare window: ${r.size.burst} declarations stored, then ${r.size.burst} passes at once; the peers: ${r.size.burst} GET-edit-PUT chains at once).`,
    "",
    "| strategy | in the pool | pool PUTs | pool reads | 412 | 409 | real s |",
    "|---|---|---|---|---|---|---|",
    ...r.burst.map(
      (f) =>
        `| \`${f.strategy}\` | ${f.held}/${r.size.burst} | ${f.poolWrites} | ${f.poolReads} | ${f.status412} | ${f.status409} | ${f.seconds.toFixed(1)} |`,
    ),
    "",
  ];
  const ours = r.contention.filter((f) => f.strategy === "poolsync");
  if (ours.length > 0 && burstOurs)
    lines.push(
      `Targets (issue 43): 0 lost on either side — ${ours
        .map(
          (f) =>
            `writers every ${f.writerGapMs} ms: ${verdict(f.lostOurs === 0 && f.lostTheirs === 0)} (ours ${f.lostOurs}, theirs ${f.lostTheirs} of ${f.theirOps})`,
        )
        .join(
          "; ",
        )}; a burst of ${r.size.burst} declarations makes one pool write — ${verdict(burstOurs.poolWrites === 1 && burstOurs.held === r.size.burst)} (${burstOurs.poolWrites} PUT, ${burstOurs.held}/${r.size.burst} in the pool).`,
      "",
    );
  lines.push(MARK_END, "");
  return lines.join("\n");
}

/** Writes the section into RESULTS.md in place (or at its end), leaving every other section as it was. */
export function writeIpPoolsSection(resultsMd: string, r: IpPoolsResult): void {
  writeMarkedSection(resultsMd, { start: MARK_START, end: MARK_END }, renderIpPools(r));
}

/** The section as last measured (bench/ipPools.json), for a full run that rewrites RESULTS.md from results.json. */
export function lastIpPoolsSection(dir: string): string {
  const file = path.join(dir, "ipPools.json");
  return existsSync(file) ? `\n${renderIpPools(JSON.parse(readFileSync(file, "utf8")) as IpPoolsResult)}` : "";
}
