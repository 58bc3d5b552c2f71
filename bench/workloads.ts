import { SETTINGS } from "../src/config";
import { accountFor, refusalOf } from "./accounting";
import { QUEUE_DECLARER } from "../src/core/declarations";
import { MAX_DECLARATIONS_PER_CALLER } from "../src/core/declarationCap";
import { parseScaleSetId, type ScaleSetRef } from "../src/core/resourceIds";
// The benchmark's workloads, each run once per strategy on a fresh simulator with the same seed.
import type { ArmSimulator } from "../sim";
import type { BucketLow } from "../sim/throttle";
import { startPeer, type PeerKind, type StrategyRun } from "./peers";
import { startPoolsync, type HostSchedule, type PoolsyncOptions, type PoolsyncRun } from "./poolsyncRun";
import { startPoolsyncProcesses, type PoolsyncProcessesRun } from "./poolsyncProcesses";
import { traceChanges } from "./changeTrace";
import { percentile, prng } from "./stats";
import {
  buildWorld,
  ConvergenceMonitor,
  flexNicIds,
  observed,
  OtherWriters,
  satisfied,
  startSim,
  type Change,
  type SimProfile,
  type World,
  type WorldSpec,
} from "./world";

export type Strategy = PeerKind | "poolsync" | "poolsync-ttl-only" | "poolsync-no-cache" | "poolsync-no-window";
export const PEERS: PeerKind[] = ["last-writer-wins", "get-then-put-if-match"];

export interface Env {
  storage: string;
  profile: Omit<SimProfile, "timeScale">;
  log: (line: string) => void;
}

export interface ArmCounts {
  modelWrites: number;
  instanceWrites: number;
  reads: number;
  operationPolls: number;
  status412: number;
  status429: number;
  status409: number;
  requests: number;
}

function armCounts(sim: ArmSimulator): ArmCounts {
  const s = sim.control.stats();
  return {
    modelWrites: s.puts + s.patches,
    // A Flexible scale set's VMs are written on their NICs: those writes and reads count as the instances' do.
    instanceWrites: s.instancePuts + s.nicPuts,
    reads: s.gets + s.lists + s.instanceGets + s.instanceLists + s.nicGets + s.vmGets + s.vmLists,
    operationPolls: s.operationGets,
    status412: s.status412,
    status429: s.status429,
    status409: s.status409,
    requests: s.requests,
  };
}

interface Started {
  sim: ArmSimulator;
  run: StrategyRun;
  poolsync?: PoolsyncRun;
}

/**
 * The simulator's time scale for this strategy: the peers make no storage calls, so any scale measures them
 * alike; poolsync's Table and Queue round trips (and the queue's whole-second visibility delays) are real time,
 * so each real millisecond of them would count `timeScale` simulated ones. It runs at `poolsyncTimeScale`.
 */
export function timeScaleFor(strategy: Strategy, size: { timeScale: number; poolsyncTimeScale?: number }): number {
  return strategy.startsWith("poolsync") ? (size.poolsyncTimeScale ?? size.timeScale) : size.timeScale;
}

async function start(
  strategy: Strategy,
  env: Env,
  world: World,
  timeScale: number,
  seed: number,
  ps: Partial<PoolsyncOptions> = {},
): Promise<Started> {
  const sim = await startSim({ ...env.profile, timeScale }, world.seed, seed);
  if (strategy === "last-writer-wins" || strategy === "get-then-put-if-match") {
    return { sim, run: startPeer(strategy, sim, { concurrency: 8, instanceConcurrency: 4, pollMs: 1000 }) };
  }
  const poolsyncOptions: PoolsyncOptions = {
    storage: env.storage,
    subscriptions: world.subscriptions,
    events: strategy === "poolsync",
    eventDelayMs: 5_000,
    timerEveryMs: 5 * 60_000,
    random: prng(seed),
    ...(strategy === "poolsync-no-cache" ? { env: { POOLSYNC_CACHE_ENABLED: "false" } } : {}),
    // No batching: each declaration reconciles at once, as the peers apply each change the moment it arrives.
    ...(strategy === "poolsync-no-window"
      ? { env: { POOLSYNC_DECLARE_WINDOW_SECONDS: "0", POOLSYNC_GATHER_MILLISECONDS: "0" } }
      : {}),
    ...ps,
  };
  const poolsync = ps.processes
    ? await startPoolsyncProcesses(sim, { ...poolsyncOptions, processes: ps.processes })
    : await startPoolsync(sim, poolsyncOptions);
  return { sim, run: poolsync, poolsync };
}

async function finish(s: Started): Promise<void> {
  await s.run.close().catch(() => undefined);
  await s.sim.stop();
}

/** Waits for `cond` (checked every 25 ms real) until `simCapMs` of simulated time or `realCapMs` pass. */
async function until(
  sim: ArmSimulator,
  cond: () => boolean | Promise<boolean>,
  simCapMs: number,
  realCapMs: number,
): Promise<boolean> {
  const simEnd = sim.control.clock.now() + simCapMs;
  const realEnd = Date.now() + realCapMs;
  for (;;) {
    if (await cond()) return true;
    if (sim.control.clock.now() > simEnd || Date.now() > realEnd) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function idleWithin(run: StrategyRun, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const done = await Promise.race([
    run.idle().then(() => true),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms))),
  ]);
  if (timer) clearTimeout(timer);
  return done;
}

function poolsyncOwn(p: PoolsyncRun | undefined, changes: number): Record<string, number> {
  if (!p) return {};
  const o = p.own();
  return {
    tableOps: o.tableOps ?? 0,
    tableOpsPerChange: (o.tableOps ?? 0) / Math.max(1, changes),
    messages: o.messages ?? 0,
    handlerErrors: o.handlerErrors ?? 0,
    reconcilesEnqueued: o.reconcilesEnqueued ?? 0,
  };
}

/** The instances' comings and goings and memory, when they ran as processes of their own. */
function processFigures(p: PoolsyncRun | undefined): { processes?: ReturnType<PoolsyncProcessesRun["figures"]> } {
  return p && "figures" in p ? { processes: (p as PoolsyncProcessesRun).figures() } : {};
}

/** How many of `times` (real ms) fell in each 5 s step after `t0`, as a rate per second; earlier ones count in the first. */
function perSecondBy5s(times: readonly number[], t0: number): number[] {
  const steps: number[] = [];
  for (const at of times) {
    const i = Math.max(0, Math.floor((at - t0) / 5_000));
    while (steps.length <= i) steps.push(0);
    steps[i]! += 0.2;
  }
  return steps.map((x) => Math.round(x * 10) / 10);
}

/**
 * Where poolsync's 429s, 412s and re-enqueues came from, from its own log lines; and where its time went: the
 * real-time span of its writes, writes per second in 5 s steps, and how long its reconciles that wrote took.
 */
function poolsyncNotes(
  p: PoolsyncRun | undefined,
  startedAt?: number,
  timerReadsBefore = 0,
  firstWriteSentS?: number,
): Record<string, unknown> | undefined {
  if (!p) return undefined;
  const t0 = startedAt ?? p.logs.writesAt[0] ?? 0;
  const writing = p.logs.reconciles.filter((r) => Number(r.armWrites ?? 0) > 0).map((r) => Number(r.durationMs ?? 0));
  // Which trigger spent the reads: the first word of the reconcile's (first) reason; the timer's own reads apart.
  const readsByTrigger: Record<string, number> = { "timer run": (p.own().timerReads ?? 0) - timerReadsBefore };
  for (const r of p.logs.reconciles) {
    const kind = /^[a-z ]+?(?=:| )/i.exec(String(r.trigger ?? ""))?.[0] ?? "other";
    readsByTrigger[kind] = (readsByTrigger[kind] ?? 0) + Number(r.armReads ?? 0);
  }
  return {
    counts: { ...p.logs.counts },
    samples: { ...p.logs.samples },
    realSeconds: {
      // When ARM took the first write (its operation began), and when poolsync logged its answer: an operation later.
      ...(firstWriteSentS === undefined ? {} : { firstWriteSent: firstWriteSentS }),
      firstWrite: ((p.logs.writesAt[0] ?? t0) - t0) / 1000,
      lastWrite: ((p.logs.writesAt.at(-1) ?? t0) - t0) / 1000,
      // What the first write waited for: the intake of the burst's declarations, and the first pass to begin.
      lastDeclarationStored: ((p.logs.declaredAt.at(-1) ?? t0) - t0) / 1000,
      firstPassStarted:
        (Math.min(
          ...p.logs.reconciles.map((r) => Number(r.endedAt) - Number(r.durationMs ?? 0)),
          p.logs.writesAt[0] ?? t0,
        ) -
          t0) /
        1000,
    },
    writesPerSecondBy5s: perSecondBy5s(p.logs.writesAt, t0),
    // When the burst's intake ran: a stall here (declarations stored late, behind passes holding the trigger's slots)
    // is what makes a scale set's second pass.
    declarationsPerSecondBy5s: perSecondBy5s(p.logs.declaredAt, t0),
    readsByTrigger,
    writingReconcileMs: {
      n: writing.length,
      p50: percentile(writing, 50),
      p90: percentile(writing, 90),
      max: Math.max(0, ...writing),
    },
  };
}

// ---- 1. contention ------------------------------------------------------------------------------------------

export interface ContentionSize {
  changes: number;
  capacity: number;
  arrivalGapMs: number;
  writers: number;
  writerGapMs: number;
  timeScale: number;
  /**
   * poolsync's time scale (see timeScaleFor): at 150× every whole second of queue visibility a deferred or requeued
   * pass waits is 2.5 simulated minutes, and the traced run spent most of its 241 simulated minutes so.
   */
  poolsyncTimeScale?: number;
  /** A Flexible scale set: members are NIC resources (poolsync only; the peers speak the VMSS VM API). */
  flexible?: boolean;
}

export interface ContentionResult extends ArmCounts {
  lostOurs: number;
  /** Changes whose last declaration poolsync refused at intake (the caller told why): not applied, not lost. */
  refused: number;
  lostTheirs: number;
  theirOps: number;
  converged: number;
  simMinutes: number;
  notes?: ReturnType<typeof poolsyncNotes>;
  [k: string]: unknown;
}

/**
 * At most this many pools declared present at once: the benchmark declares through the queue, which is one caller,
 * and one caller may hold at most MAX_DECLARATIONS_PER_CALLER (50) present declarations of a target; a workload
 * beyond it measures poolsync refusing declarations, not keeping them.
 */
export const CONTENTION_MAX_LIVE = MAX_DECLARATIONS_PER_CALLER - 2;

/**
 * 200 changes on one scale set (adds, and removes of pools added earlier) while 3 other writers change their own ip
 * configurations.
 */
export function contentionChanges(size: ContentionSize, ssId: string, pools: string[], random: () => number): Change[] {
  const changes: Change[] = [];
  const added: number[] = [];
  let nextPool = 0;
  const removes = Math.round(size.changes * 0.3);
  let removesLeft = removes;
  for (let i = 0; i < size.changes; i++) {
    const addsLeft = size.changes - removes - nextPool;
    const eligible = added.filter((slot) => slot <= i - 20);
    const full = added.length >= CONTENTION_MAX_LIVE;
    const doRemove =
      eligible.length > 0 &&
      (full || (removesLeft > 0 && (addsLeft <= 0 || random() < removesLeft / (removesLeft + addsLeft))));
    if (doRemove) {
      const slot = eligible[Math.floor(random() * eligible.length)] as number;
      added.splice(added.indexOf(slot), 1);
      const pool = changes[slot]?.poolId as string;
      changes.push({ id: i, scaleSetId: ssId, poolId: pool, state: "absent" });
      removesLeft--;
    } else {
      changes.push({ id: i, scaleSetId: ssId, poolId: pools[nextPool++] as string, state: "present" });
      added.push(i);
    }
  }
  return changes;
}

/**
 * `hosts`: poolsync as that many Function hosts at once (see PoolsyncOptions.hosts); `processes`: each in a process of
 * its own, coming and going on that schedule (PoolsyncOptions.processes).
 */
export async function runContention(
  strategy: Strategy,
  env: Env,
  size: ContentionSize,
  seed: number,
  hosts = 1,
  processes?: HostSchedule,
): Promise<ContentionResult> {
  const spec: WorldSpec = {
    subscriptions: 1,
    scaleSetsPerSubscription: 1,
    capacity: size.capacity,
    pools: size.changes,
    ...(size.flexible ? { orchestrationMode: "Flexible" as const } : {}),
  };
  const world = buildWorld(spec);
  const ssId = world.scaleSets[0] as string;
  const changes = contentionChanges(size, ssId, world.pools[0] as string[], prng(seed));
  const s = await start(strategy, env, world, timeScaleFor(strategy, size), seed, {
    hosts,
    ...(processes ? { processes } : {}),
  });
  const { sim } = s;
  try {
    const targets = [
      ssId,
      ...(size.flexible ? flexNicIds(sim, ssId) : sim.control.instances(ssId).map((vm) => String(vm.id))),
    ];
    const wrand = prng(seed + 7);
    const writers = new OtherWriters(sim, world, () => targets[Math.floor(wrand() * targets.length)] as string, wrand);
    const t0 = sim.control.clock.now();
    const realT0 = Date.now();
    writers.start(size.writers, size.writerGapMs);
    for (const c of changes) {
      await s.run.submit(c);
      await sim.control.clock.sleep(size.arrivalGapMs);
    }
    // Ours: the last declared state of every pool, on the model and every instance.
    const final = new Map<string, "present" | "absent">();
    for (const c of changes) final.set(c.poolId.toLowerCase(), c.state);
    const missing = () => {
      const seen = observed(sim, ssId);
      let n = 0;
      for (const [pool, state] of final) {
        const want = state === "present";
        if (seen.model.has(pool) !== want || seen.instances.some((i) => i.has(pool) !== want)) n++;
      }
      return n;
    };
    // The other writers keep going for 10 more simulated minutes after the last change arrived (or until ours all
    // show, if that is later and within the cap), then stop; then the strategy finishes.
    let idle = false;
    void s.run.idle().then(() => (idle = true));
    await sim.control.clock.sleep(10 * 60_000);
    await until(sim, () => idle || missing() === 0, 3 * 3_600_000, 30_000);
    await writers.stop();
    await idleWithin(s.run, 180_000);
    sim.control.settle();
    const theirs = writers.lostUpdates();
    // Every change accounted for: the last declared change of each pool that does not hold on the model and every
    // member, with its declaration's outcome (the earlier changes of a pool are superseded by design here). One
    // refused at intake (the caller told, with the reason) is not lost: counted apart.
    const last = new Map<string, Change>();
    for (const c of changes) last.set(c.poolId.toLowerCase(), c);
    const notHolding = [...last.values()].filter((c) => !satisfied(sim, c));
    const refusals = s.poolsync?.logs.refusals ?? [];
    const unconverged = await accountFor(notHolding, s.poolsync?.services, [], refusals);
    const refused = notHolding.filter((c) => refusalOf(c, refusals) !== undefined).length;
    const lostOurs = Math.max(0, missing() - refused);
    return {
      strategy,
      ...armCounts(sim),
      lostOurs,
      refused,
      unconverged,
      lostTheirs: theirs.lost,
      theirOps: theirs.ops,
      converged: final.size - lostOurs,
      simMinutes: (sim.control.clock.now() - t0) / 60_000,
      ...poolsyncOwn(s.poolsync, changes.length),
      peer: s.poolsync ? {} : s.run.own(),
      notes: poolsyncNotes(s.poolsync, realT0),
      ...processFigures(s.poolsync),
    };
  } finally {
    await finish(s);
  }
}

// ---- 2. bursts -----------------------------------------------------------------------------------------------

export interface BurstSize {
  scaleSets: number;
  capacity: number;
  perScaleSet: number;
  timeScale: number;
  poolsyncTimeScale?: number;
  flexible?: boolean;
}

export interface BurstResult extends ArmCounts {
  converged: number;
  changes: number;
  convergeS: number;
  p50S: number;
  p99S: number;
  maxModelWritesPerScaleSet: number;
  notes?: ReturnType<typeof poolsyncNotes>;
  [k: string]: unknown;
}

export async function runBurst(
  strategy: Strategy,
  env: Env,
  size: BurstSize,
  seed: number,
  hosts = 1,
  processes?: HostSchedule,
): Promise<BurstResult> {
  const world = buildWorld({
    subscriptions: 1,
    scaleSetsPerSubscription: size.scaleSets,
    capacity: size.capacity,
    pools: size.perScaleSet,
    ...(size.flexible ? { orchestrationMode: "Flexible" as const } : {}),
  });
  const rand = prng(seed);
  const changes: Change[] = [];
  for (const ss of world.scaleSets)
    for (const pool of world.pools[0] as string[])
      changes.push({ id: changes.length, scaleSetId: ss, poolId: pool, state: "present" });
  // Arrival order shuffled (the same for every strategy in a run).
  for (let i = changes.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [changes[i], changes[j]] = [changes[j] as Change, changes[i] as Change];
  }
  const s = await start(strategy, env, world, timeScaleFor(strategy, size), seed, {
    hosts,
    ...(processes ? { processes } : {}),
  });
  const { sim } = s;
  const monitor = new ConvergenceMonitor(sim);
  try {
    const t0 = sim.control.clock.now();
    const realT0 = Date.now();
    await Promise.all(
      changes.map((c) => {
        monitor.watch(c);
        return s.run.submit(c);
      }),
    );
    let idle = false;
    void s.run.idle().then(() => (idle = true));
    // Done when every change shows, or when the strategy has nothing left to do (what is missing then is lost). At
    // CRP's published windows the wide burst's 500 instance writes take at least 360 s (three 3-minute windows' worth,
    // see burstBound), real seconds at 1×: the cap was 5 real minutes, which cut every 1× wide burst off at 130-210 of
    // its 500 changes, all still pending.
    await until(sim, () => monitor.outstanding === 0 || idle, 3 * 3_600_000, 20 * 60_000);
    monitor.check();
    const lat = monitor.latencies().map((ms) => ms / 1000);
    const convergeS = monitor.outstanding === 0 ? (monitor.lastAppliedAt() - t0) / 1000 : Number.POSITIVE_INFINITY;
    await idleWithin(s.run, 60_000);
    const unconverged = await accountFor(monitor.unconverged(), s.poolsync?.services, changes);
    const perSs = world.scaleSets.map((id) => {
      const st = sim.control.stats(id);
      return st.puts + st.patches;
    });
    return {
      strategy,
      ...armCounts(sim),
      changes: changes.length,
      converged: changes.length - monitor.outstanding,
      unconverged,
      convergeS,
      p50S: percentile(lat, 50),
      p99S: percentile(lat, 99),
      maxModelWritesPerScaleSet: Math.max(...perSs),
      ...poolsyncOwn(s.poolsync, changes.length),
      peer: s.poolsync ? {} : s.run.own(),
      notes: poolsyncNotes(s.poolsync, realT0, 0, firstOperationAfter(sim, t0)),
      ...processFigures(s.poolsync),
    };
  } finally {
    monitor.stop();
    await finish(s);
  }
}

/** Simulated seconds from `t0` to the first write ARM accepted (its operation's start), for a burst at 1×. */
function firstOperationAfter(sim: ArmSimulator, t0: number): number | undefined {
  const starts = sim.control
    .operations()
    .map((o) => Date.parse(o.startTime))
    .filter((t) => t >= t0);
  return starts.length === 0 ? undefined : (Math.min(...starts) - t0) / 1000;
}

/**
 * The least time CRP's and ARM's write budgets allow for a burst: every scale set needs at least one model write
 * and every instance one write of its own (all of its pool changes in one), and the instances' writes can start
 * only after the model's has ended (model before instances). Per bucket with N writes drawn from it, burst B and
 * refill r: the last token is there at max(0, N − B) / r (CRP refills per minute: ceil((N − B) / r_min) minutes;
 * ARM continuously: (N − B) / r_s). A write is visible in ARM once its PUT is taken (GET shows the new body while
 * its operation runs, as CRP answers), so the last write adds one request latency; the model's operation is on the
 * path because an instance write while it runs answers 409, and so CRP's instance-write windows start only when the
 * first model operation has ended (this bound took them from the burst's start until 2026-12-08: 30 s too low in the
 * slow profile).
 *   bound = max(critical path + instance windows, max over buckets(last token) + latency)
 *   critical path = GET + PUT model + model operation + LIST + PUT instance
 */
export function burstBound(
  size: BurstSize,
  profile: Omit<SimProfile, "timeScale">,
  pollMs: number,
): { boundS: number; formula: string; parts: Record<string, number> } {
  const modelWrites = size.scaleSets;
  const instanceWrites = size.scaleSets * size.capacity;
  const L = profile.latency.fixedMs + profile.latency.jitterMs / 2;
  // The slow profile makes a model write's operation take its own time.
  const modelD = profile.scaleSetWriteMs ?? profile.operationDurationMs;
  const crpMinutes = (n: number, bucket: number, perMin: number) =>
    n <= bucket ? 0 : Math.ceil((n - bucket) / perMin) * 60;
  // CRP's subscription windows at the sizes the simulator meters by default (sim/throttle.ts PUBLISHED_LIMITS: model
  // and instance writes 240 per 3 minutes and 1,200 per 30): an ideal client spends a window's worth at once and the
  // next when the window has turned.
  const crpWindows = (n: number, size: number, windowS: number) =>
    n <= size ? 0 : Math.ceil((n - size) / size) * windowS;
  const parts = {
    perResourceModel: crpMinutes(1, 12, 4),
    perResourceInstance: crpMinutes(1, 12, 4),
    crpSubscriptionVmssUpdate: Math.max(crpWindows(modelWrites, 240, 180), crpWindows(modelWrites, 1200, 1800)),
    crpSubscriptionVmUpdate: Math.max(crpWindows(instanceWrites, 240, 180), crpWindows(instanceWrites, 1200, 1800)),
    armWrites: Math.max(0, modelWrites + instanceWrites - 200) / 10,
    // At least a GET and a LIST per scale set and one operation poll per write (ARM counts polls as reads).
    armReads: Math.max(0, 2 * modelWrites + modelWrites + instanceWrites - 250) / 25,
  };
  const lastToken = Math.max(...Object.values(parts));
  // Converged means visible in ARM, so the last operation's poll is not on the path; an ideal client would poll
  // the model's operation the moment it ends, so no poll interval is either (`pollMs` is kept in the parts).
  const tail = L / 1000;
  const criticalPath = (4 * L + modelD) / 1000;
  const boundS = Math.max(criticalPath + parts.crpSubscriptionVmUpdate, lastToken + tail);
  return {
    boundS,
    parts: { ...parts, tailS: tail, criticalPathS: criticalPath, writes: modelWrites + instanceWrites, pollMs },
    formula: `max(critical path ${criticalPath.toFixed(1)} s + CRP instance windows ${parts.crpSubscriptionVmUpdate} s, max(ARM writes (${modelWrites}+${instanceWrites}−200)/10 s = ${parts.armWrites.toFixed(1)} s, ARM reads (${3 * modelWrites}+${instanceWrites}−250)/25 s = ${parts.armReads.toFixed(1)} s, CRP per-resource ${parts.perResourceInstance} s, CRP windows (instance writes ${instanceWrites} in 240 per 3 min) ${Math.max(parts.crpSubscriptionVmUpdate, parts.crpSubscriptionVmssUpdate)} s) + latency ${tail.toFixed(1)} s)`,
  };
}

// ---- 3. steady state -----------------------------------------------------------------------------------------

export interface SteadySize {
  scaleSets: number;
  capacity: number;
  changes: number;
  durationMs: number;
  writers: number;
  writerGapMs: number;
  timeScale: number;
  poolsyncTimeScale?: number;
  /** Real ms to wait at the end for changes still outstanding (default 60 s; 1x runs need longer). */
  tailRealMs?: number;
}

export interface SteadyResult extends ArmCounts {
  changes: number;
  converged: number;
  readsPerChange: number;
  readsPerChangeInclPolls: number;
  p50S: number;
  p99S: number;
  warmupReads: number;
  [k: string]: unknown;
}

export async function runSteady(strategy: Strategy, env: Env, size: SteadySize, seed: number): Promise<SteadyResult> {
  const pools = 20;
  const world = buildWorld({
    subscriptions: 1,
    scaleSetsPerSubscription: size.scaleSets,
    capacity: size.capacity,
    pools,
  });
  const rand = prng(seed);
  const poolIds = world.pools[0] as string[];
  const declared = new Map<string, boolean>();
  const plan: Array<{ at: number; change: Change }> = [];
  for (let i = 0; i < size.changes; i++) {
    const ss = world.scaleSets[Math.floor(rand() * world.scaleSets.length)] as string;
    const pool = poolIds[1 + Math.floor(rand() * (pools - 1))] as string;
    const key = `${ss}|${pool}`;
    const present = !(declared.get(key) ?? false);
    declared.set(key, present);
    plan.push({
      at: rand() * size.durationMs,
      change: { id: i, scaleSetId: ss, poolId: pool, state: present ? "present" : "absent" },
    });
  }
  plan.sort((a, b) => a.at - b.at);
  const s = await start(strategy, env, world, timeScaleFor(strategy, size), seed);
  const { sim } = s;
  const monitor = new ConvergenceMonitor(sim, 50);
  try {
    // Warm-up (not measured): one declaration per scale set, applied, so the hour starts in steady state.
    const warm = world.scaleSets.map((ss, i) => ({
      id: -1 - i,
      scaleSetId: ss,
      poolId: poolIds[0] as string,
      state: "present" as const,
    }));
    const warmMonitor = new ConvergenceMonitor(sim, 50);
    for (const c of warm) {
      warmMonitor.watch(c);
      await s.run.submit(c);
    }
    const w0 = Date.now();
    await until(sim, () => warmMonitor.outstanding === 0, 3_600_000, 180_000);
    warmMonitor.stop();
    await idleWithin(s.run, 60_000);
    env.log(`steady ${strategy}: warm-up ${((Date.now() - w0) / 1000).toFixed(1)} s real`);
    const warmupReads = armCounts(sim).reads;
    sim.control.resetStats();

    const wrand = prng(seed + 11);
    const targets = world.scaleSets.flatMap((ss) => [ss, ...sim.control.instances(ss).map((vm) => String(vm.id))]);
    const writers = new OtherWriters(sim, world, () => targets[Math.floor(wrand() * targets.length)] as string, wrand);
    // The notes count the measured hour only.
    s.poolsync?.logs.reconciles.splice(0);
    s.poolsync?.logs.writesAt.splice(0);
    const timerReadsBefore = s.poolsync?.own().timerReads ?? 0;
    s.poolsync?.logs.trace.splice(0);
    const realT0 = Date.now();
    const t0 = sim.control.clock.now();
    writers.start(size.writers, size.writerGapMs);
    for (const { at, change } of plan) {
      const wait = t0 + at - sim.control.clock.now();
      if (wait > 0) await sim.control.clock.sleep(wait);
      monitor.watch(change);
      await s.run.submit(change);
    }
    const end = t0 + size.durationMs;
    if (end > sim.control.clock.now()) await sim.control.clock.sleep(end - sim.control.clock.now());
    await writers.stop();
    const e0 = Date.now();
    await until(sim, () => monitor.outstanding === 0, 30 * 60_000, size.tailRealMs ?? 60_000);
    env.log(`steady ${strategy}: tail ${((Date.now() - e0) / 1000).toFixed(1)} s real`);
    monitor.check();
    const unconverged = await accountFor(
      monitor.unconverged(),
      s.poolsync?.services,
      plan.map((x) => x.change),
    );
    const counts = armCounts(sim);
    const lat = monitor.latencies().map((ms) => ms / 1000);
    // A change superseded before it showed (the same pool toggled back) counts as applied when the end state holds.
    return {
      strategy,
      ...counts,
      changes: size.changes,
      converged: size.changes - monitor.outstanding,
      unconverged,
      readsPerChange: counts.reads / size.changes,
      readsPerChangeInclPolls: (counts.reads + counts.operationPolls) / size.changes,
      p50S: percentile(lat, 50),
      p99S: percentile(lat, 99),
      warmupReads,
      ...poolsyncOwn(s.poolsync, size.changes),
      timerRuns: s.poolsync?.own().timerRuns ?? 0,
      timerReads: (s.poolsync?.own().timerReads ?? 0) - timerReadsBefore,
      peer: s.poolsync ? {} : s.run.own(),
      notes: {
        ...poolsyncNotes(s.poolsync, realT0, timerReadsBefore),
        // At 1x (the latency workload) every change's timeline, from poolsync's log: what the slowest waited for.
        ...(s.poolsync && timeScaleFor(strategy, size) === 1
          ? {
              trace: changeTraceOf(
                s.poolsync,
                monitor,
                plan.map((x) => x.change),
                t0,
                realT0,
              ),
            }
          : {}),
      },
    };
  } finally {
    monitor.stop();
    await finish(s);
  }
}

/** Monitor times are the simulator's (at 1x, a constant shift from real time): shifted to the log's Date.now(). */
function changeTraceOf(
  p: PoolsyncRun,
  monitor: { declaredAt: Map<number, number>; appliedAt: Map<number, number> },
  changes: Change[],
  simT0: number,
  realT0: number,
) {
  const real = (m: Map<number, number>) => new Map([...m].map(([id, at]) => [id, at - simT0 + realT0]));
  const passes = p.logs.reconciles.map((r) => ({
    targetId: String(r.targetId ?? "").toLowerCase(),
    startedAt: Number(r.endedAt) - Number(r.durationMs ?? 0),
  }));
  return traceChanges(changes, real(monitor.declaredAt), real(monitor.appliedAt), p.logs.trace, passes);
}

// ---- 3b. latency at 1x ---------------------------------------------------------------------------------------

/**
 * The latency workload: the steady workload's world, writers and seeded arrival process (the same generator and
 * seed, so the same first changes at the same rate), but `minutes` long instead of its whole period and at time scale
 * 1x for every strategy, so poolsync's Table and Queue round trips count at face value. Declare-to-visible-everywhere
 * is then real time for everyone. The changes scale with the window (rate kept), at least 5.
 */
export function latencySize(steady: SteadySize, minutes: number): SteadySize {
  const durationMs = Math.round(minutes * 60_000);
  return {
    ...steady,
    durationMs,
    changes: Math.max(5, Math.round((steady.changes * durationMs) / steady.durationMs)),
    timeScale: 1,
    poolsyncTimeScale: 1,
    // A change declared in the last second still gets the slowest strategy's p99 and more to show.
    tailRealMs: 180_000,
  };
}

// ---- 4. scale ------------------------------------------------------------------------------------------------

export interface ScaleSize {
  subscriptions: number;
  /** Resource groups per subscription, the scale sets split evenly over them. */
  groupsPerSubscription: number;
  scaleSetsPerSubscription: number;
  changes: number;
  timeScale: number;
}

/** The timer runs at its schedule until every scale set has been read once: what one full sweep costs. */
export interface SweepFigures {
  runs: number;
  realMs: number;
  cpuMs: number;
  tableOps: number;
  /** ARM requests by kind (the read budget counts each one). */
  listPages: number;
  scaleSetGets: number;
  instanceLists: number;
  reads: number;
  visited: number;
  /** Every scale set read in the sweep (false: the run cap stopped it first). */
  complete: boolean;
  /** CRP's and ARM's refusals meanwhile. */
  status429: number;
  /** The sweep's length on the simulator's clock (the windows' time). */
  simulatedMinutes: number;
  /** Visits skipped for a subscription whose reads were paused (a 429, or the read pacer's wait), summed over runs. */
  pausedVisits: number;
  /** The fewest tokens each of CRP's subscription windows held during the sweep (sim `bucketLows`). */
  windows: Record<string, BucketLow>;
}

export interface ScaleResult {
  scaleSets: number;
  resourceGroups: number;
  declarations: number;
  seedSeconds: number;
  /** Cold: the cache empty, every declared scale set unknown. Warm: every cached row past the TTL at once. */
  sweeps: { cold: SweepFigures; warm: SweepFigures };
  readBudget: number;
  ttlSeconds: number;
  /** The warm sweep's requests times the sweeps an hour makes at the default TTL (every row due once per TTL). */
  readsPerHour: number;
  changes: number;
  tableOpsPerChange: number;
  tableOpsPerChangeOfEvents?: number;
  sharedTableWritesPerChange?: Record<string, number>;
  armReadsPerChange: number;
  armWritesPerChange: number;
  cpuMsPerChange: number;
  realSecondsForChanges: number;
}

/** The default TTL (600 s): a cached scale set is due once per TTL, so a full warm sweep repeats 6 times an hour. */
const DEFAULT_TTL_S = 600;
/**
 * The scale workload runs with a day's TTL so that nothing expires during a sweep; its clock jumps to age the cache.
 */
const SCALE_TTL_S = 86_400;
const MAX_SWEEP_RUNS = 200;
/**
 * POOLSYNC_RECONCILE_SCHEDULE's default ("0 *\/5 * * * *"): a run that stops on a spent window goes on 5 minutes later,
 * on the simulator's clock, as the schedule would have it, when CRP's 3-minute windows have moved on.
 */
const TIMER_PERIOD_MS = 5 * 60_000;

async function sweep(p: PoolsyncRun, sim: ArmSimulator, done: () => Promise<boolean>): Promise<SweepFigures> {
  // Counted from here: the windows' low-water marks and the 429s are the sweep's own.
  sim.control.resetStats();
  const simStart = sim.control.clock.now();
  const f: SweepFigures = {
    runs: 0,
    realMs: 0,
    cpuMs: 0,
    tableOps: 0,
    listPages: 0,
    scaleSetGets: 0,
    instanceLists: 0,
    reads: 0,
    visited: 0,
    complete: false,
    status429: 0,
    simulatedMinutes: 0,
    pausedVisits: 0,
    windows: {},
  };
  f.complete = await done();
  while (!f.complete && f.runs < MAX_SWEEP_RUNS) {
    const ops0 = p.tables.ops;
    const cpu0 = process.cpuUsage();
    const t0 = Date.now();
    const run = await p.services.reconcileStale();
    const cpu = process.cpuUsage(cpu0);
    f.runs++;
    f.realMs += Date.now() - t0;
    f.cpuMs += (cpu.user + cpu.system) / 1000;
    f.tableOps += p.tables.ops - ops0;
    f.listPages += run.listPages;
    f.scaleSetGets += run.scaleSetGets;
    f.instanceLists += run.instanceLists;
    f.reads += run.readsUsed;
    f.visited += run.visited;
    f.pausedVisits += run.pausedVisits;
    if (run.visited === 0 && run.readsUsed === 0 && run.pausedVisits === 0) break;
    // Checked once a run (a scan of every cached scale set), before the wait for the next one.
    f.complete = await done();
    if (!f.complete) await sim.control.clock.sleep(TIMER_PERIOD_MS);
  }
  f.status429 = sim.control.stats().status429;
  f.simulatedMinutes = (sim.control.clock.now() - simStart) / 60_000;
  f.windows = sim.control.bucketLows();
  return f;
}

export async function runScale(env: Env, size: ScaleSize, seed: number): Promise<ScaleResult> {
  const world = buildWorld({
    subscriptions: size.subscriptions,
    groupsPerSubscription: size.groupsPerSubscription,
    scaleSetsPerSubscription: size.scaleSetsPerSubscription,
    capacity: 1,
    pools: 2,
  });
  // Already in pool-0 everywhere: the declarations below describe the world as it is (a steady fleet).
  world.seed.subscriptions.forEach((sub, i) => {
    for (const rg of sub.resourceGroups)
      for (const ss of rg.scaleSets ?? [])
        for (const n of ss.nics) for (const c of n.ipConfigurations) c.backendPools = [world.pools[i]![0]!];
  });
  let ahead = 0;
  const s = await start("poolsync", env, world, size.timeScale, seed, {
    timerEveryMs: 0,
    events: true,
    env: { POOLSYNC_CACHE_TTL_SECONDS: String(SCALE_TTL_S) },
    clockAheadMs: () => ahead,
  });
  const p = s.poolsync as PoolsyncRun;
  try {
    const seeded = Date.now();
    let next = 0;
    const poolOf = (id: string) => world.pools[world.subscriptions.indexOf(id.split("/")[2] ?? "")]?.[0] as string;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < world.scaleSets.length) {
          const id = world.scaleSets[next++] as string;
          const { stored } = await p.services.declarations.upsert(madeUpRef(id), {
            scaleSetId: id,
            backendPoolId: poolOf(id),
            ipConfiguration: "ipConfig0",
            state: "present",
            requestId: `seed-${next}`,
            declaredAt: new Date(sim0(s)).toISOString(),
            declaredBy: QUEUE_DECLARER,
          });
          // Applied, as ARM holds it: a declaration left pending would look stuck once the clock moves on, and the
          // timer would ask a reconcile of every scale set (the sweep measures reads, not that).
          await p.services.declarations.recordOutcome(madeUpRef(id), stored, {
            kind: "applied",
            appliedEtag: "",
            at: new Date(sim0(s)).toISOString(),
          });
        }
      }),
    );
    const seedSeconds = (Date.now() - seeded) / 1000;
    const ttlMs = SCALE_TTL_S * 1000;
    const cold = await sweep(
      p,
      s.sim,
      async () => (await p.services.cache.listCachedScaleSets()).size >= world.scaleSets.length,
    );
    // Every row past the TTL at once: the worst hour-on-hour case, as if every scale set had been read together.
    ahead += ttlMs + 1_000;
    const now = () => sim0(s) + ahead;
    const warm = await sweep(
      p,
      s.sim,
      async () => (await p.services.cache.listRefreshCandidates(now() - ttlMs)).length === 0,
    );
    await idleWithin(p, 60_000);
    // Changes through the queue: pool-1 added to `changes` scale sets spread over the subscriptions.
    const rand = prng(seed);
    const picked = new Set<string>();
    while (picked.size < Math.min(size.changes, world.scaleSets.length))
      picked.add(world.scaleSets[Math.floor(rand() * world.scaleSets.length)] as string);
    const ops0 = p.tables.ops;
    const eventOps0 = p.tables.eventOps;
    const shared0 = sharedWrites(p);
    const arm0 = armCounts(s.sim);
    const cpu0 = process.cpuUsage();
    const t0 = Date.now();
    let id = 0;
    for (const ss of picked)
      await p.submit({
        id: id++,
        scaleSetId: ss,
        poolId: world.pools[world.subscriptions.indexOf(ss.split("/")[2] ?? "")]?.[1] as string,
        state: "present",
      });
    await idleWithin(p, 240_000);
    const cpu = process.cpuUsage(cpu0);
    const arm = armCounts(s.sim);
    return {
      scaleSets: world.scaleSets.length,
      resourceGroups: size.subscriptions * size.groupsPerSubscription,
      declarations: world.scaleSets.length,
      seedSeconds,
      sweeps: { cold, warm },
      readBudget: Number(SETTINGS.POOLSYNC_RECONCILE_MAX_READS.default),
      ttlSeconds: DEFAULT_TTL_S,
      readsPerHour: (warm.reads * 3600) / DEFAULT_TTL_S,
      changes: picked.size,
      tableOpsPerChange: (p.tables.ops - ops0) / picked.size,
      // Where they went beyond the targets' own partitions: the ARM events' handling, the shared table's writes.
      tableOpsPerChangeOfEvents: (p.tables.eventOps - eventOps0) / picked.size,
      sharedTableWritesPerChange: Object.fromEntries(
        Object.entries(sharedWrites(p)).map(([k, n]) => [k, (n - (shared0[k] ?? 0)) / picked.size]),
      ),
      armReadsPerChange: (arm.reads - arm0.reads) / picked.size,
      armWritesPerChange: (arm.modelWrites + arm.instanceWrites - arm0.modelWrites - arm0.instanceWrites) / picked.size,
      cpuMsPerChange: (cpu.user + cpu.system) / 1000 / picked.size,
      realSecondsForChanges: (Date.now() - t0) / 1000,
    };
  } finally {
    await finish(s);
  }
}

const sim0 = (s: Started) => s.sim.control.clock.now();

/** Writes so far to each partition of the shared table ("~…"), by partition. */
function sharedWrites(p: PoolsyncRun): Record<string, number> {
  return Object.fromEntries([...p.tables.partitionWrites].filter(([pk]) => pk.startsWith("~")));
}

/** The ref of a scale set ID the benchmark's world made up; a bad one is a bug in the benchmark. */
function madeUpRef(id: string): ScaleSetRef {
  const r = parseScaleSetId(id);
  if (!r.ok) throw new Error(`bench bug: ${id} ${r.reason}`);
  return r.value;
}
