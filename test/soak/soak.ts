// The randomized soak (issue 9): the pipeline — queue trigger, Event Grid deliveries, the timer, other writers and
// every fault the issue lists — driven by one seeded PRNG, bounded in steps and in time, then quiesced and checked
// against the invariants. The decisions (which action at which step, on what) come from the seed; how they interleave
// with the real clock does not, so a violation is reported with its seed and the step log to replay it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { QueueClient } from "@azure/storage-queue";
import { loadConfig, type Config } from "../../src/config";
import { armComputeFromConfig, createServices, type Services } from "../../src/app/services";
import { encodeMessage } from "../../src/azure/workQueue";
import type { Clock, ComputePort, Logger } from "../../src/core/ports";
import { ensureAzurite, type AzuritePorts, type RunningAzurite } from "../../local/azurite";
import { freePorts } from "../../local/freePorts";
import { startArmSimulator, type ArmSimulator, type EventGridEvent, type FaultHandle, type InterleaveHandle, type JsonObject, type SeedSpec } from "../../sim";
import { SIM_CA_FILE } from "../support/harness";
import { seededRandom as prng } from "../../sim/random";
import { decodeQueueBody } from "../support/queueBody";
import { scaleSetRef } from "../support/refs";
import { uniqueName } from "../support/storage";
import { addIpConfig, dropPool, instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import { poolId, scaleSetId } from "../support/worlds";

// The whole plan of a run follows from its seed, through the simulator's seeded PRNG.
export { seededRandom as prng } from "../../sim/random";

// ---------------------------------------------------------------------------------------------------------------
// The world: three scale sets and four pools in scope, one scale set and pool outside it.

export const SOAK_SUBSCRIPTION = "33333333-4444-5555-6666-777777777777";
const RG = "soak";
const OUTSIDE_RG = "outside";
const SCALE_SETS = ["vmss-0", "vmss-1", "vmss-2"];
const POOLS = ["pool-0", "pool-1", "pool-2", "pool-3"];
const SUBNET = `/subscriptions/${SOAK_SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`;
const ssId = (name: string) => scaleSetId(SOAK_SUBSCRIPTION, RG, name);
const pId = (name: string) => poolId(SOAK_SUBSCRIPTION, RG, "lb", name);
const OUTSIDE_SS = scaleSetId(SOAK_SUBSCRIPTION, OUTSIDE_RG, "ovmss");
const OUTSIDE_POOL = poolId(SOAK_SUBSCRIPTION, OUTSIDE_RG, "olb", "opool");

function soakWorld(): SeedSpec {
  const group = (name: string, lb: string, pools: string[], sets: string[], capacity: number) => ({
    name,
    location: "westeurope",
    virtualNetworks: [{ name: "vnet", addressPrefixes: ["10.0.0.0/8"], subnets: [{ name: "nodes", addressPrefix: "10.2.0.0/16" }] }],
    loadBalancers: [{ name: lb, backendPools: pools }],
    scaleSets: sets.map((s) => ({
      name: s,
      capacity,
      nics: [{ name: "nic-0", primary: true, ipConfigurations: [{ name: "ipConfig0", primary: true, subnet: "vnet/nodes" }] }],
    })),
  });
  return { subscriptions: [{ id: SOAK_SUBSCRIPTION, resourceGroups: [group(RG, "lb", POOLS, SCALE_SETS, 2), group(OUTSIDE_RG, "olb", ["opool"], ["ovmss"], 1)] }] };
}

// ---------------------------------------------------------------------------------------------------------------
// The faults, by name, as the table reports them.

export const FAULTS = [
  "412 storm (interleaved writer)",
  "429 with long Retry-After",
  "409 concurrent operation",
  "500 on a write",
  "503 on a read",
  "dropped connection",
  "slow answer past the client timeout, write happened",
  "operation ended Failed",
  "scale set deleted mid-run",
  "instance deleted",
  "scale out / in by another writer",
  "another writer's ip configuration",
  "another writer drops our pool (drift)",
  "Azurite stopped and restarted",
  "invocation killed mid-reconcile",
  "event duplicated",
  "event delayed past the next timer run",
  "event lost",
  "event reordered",
  "event URI odd casing / trailing slash / CloudEvents",
  "bad message (out of scope, malformed)",
] as const;
export type FaultName = (typeof FAULTS)[number];

export interface FaultRow {
  fault: FaultName;
  tried: number;
  /** Of those tried, how many the simulator actually applied to a request (sim faults only; else = tried). */
  fired: number;
  held: number;
}

export interface SoakOptions {
  seed: number;
  /** Real minutes of chaos before the quiesce (the run also stops at maxSteps). */
  minutes: number;
  maxSteps?: number;
  /** Simulated seconds per real second. */
  timeScale?: number;
  /** Function hosts polling the queue at once, each with its own memory (pacers, coalescer); a kill takes one. */
  hosts?: number;
  log?: (line: string) => void;
}

export interface SoakResult {
  seed: number;
  steps: number;
  realSeconds: number;
  simulatedMinutes: number;
  faults: FaultRow[];
  counters: Record<string, number>;
  violations: string[];
  /** The app's own error log lines (first 50): not violations by themselves, but worth a look. */
  appErrors: string[];
  /** Step log: what the PRNG chose, in order (replayable with the same seed). */
  plan: string[];
}

const OTHER_KINDS = ["ipconfig-model", "ipconfig-instance", "tag", "drop", "scale"] as const;
const SIM_FAULT_KINDS = ["412", "429", "409", "500", "503", "drop", "slow", "opfail", "instance-delete", "kill", "ss-delete"] as const;

// ---------------------------------------------------------------------------------------------------------------
// A process of the app: its services, over a Compute port and clock that a kill freezes for good.

interface Proc {
  id: number;
  services: Services;
  dead: boolean;
  died: Promise<void>;
  kill(): void;
  /** Kill after this many more Compute calls have returned (the call's effect has happened). */
  killAfter: number | undefined;
}

const never = <T>() => new Promise<T>(() => undefined);

function countingLogger(counters: Record<string, number>, errors: string[]): Logger {
  const bump = (k: string) => (counters[k] = (counters[k] ?? 0) + 1);
  return {
    info(event, fields) {
      if (event === "reconcile") {
        bump(`reconcile:${String(fields.result)}`);
        if (fields.result === "requeued" || fields.result === "failed") bump(`why:${String(fields.reason ?? "").replace(/[0-9a-f-]{36}|\/subscriptions\/\S+|\d+/g, "#").slice(0, 70)}`);
      }
    },
    warn(event) {
      bump(`warn:${event}`);
    },
    error(event, fields) {
      bump(`error:${event}`);
      if (errors.length < 50) errors.push(`${event} ${JSON.stringify(fields).slice(0, 400)}`);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------

export async function runSoak(opts: SoakOptions): Promise<SoakResult> {
  const say = opts.log ?? (() => undefined);
  const rand = prng(opts.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const chance = (p: number) => rand() < p;
  const T = opts.timeScale ?? 60;
  const maxSteps = opts.maxSteps ?? 10_000;
  const realStart = Date.now();
  const deadline = realStart + opts.minutes * 60_000;
  const counters: Record<string, number> = {};
  const bump = (k: string, n = 1) => (counters[k] = (counters[k] ?? 0) + n);
  const violations: string[] = [];
  const appErrors: string[] = [];
  const plan: string[] = [];
  const tried = new Map<FaultName, number>();
  const fired = new Map<FaultName, number>();
  const faultTargets = new Map<FaultName, string[]>(); // scale set keys each try was aimed at ("*" = run-wide)
  const tryFault = (f: FaultName, target: string) => {
    tried.set(f, (tried.get(f) ?? 0) + 1);
    faultTargets.set(f, [...(faultTargets.get(f) ?? []), target.toLowerCase()]);
  };
  const simHandles: Array<{ f: FaultName; h: FaultHandle; times: number }> = [];
  const interleaves: Array<{ h: InterleaveHandle; times: number; ss: string; tag: string }> = [];

  // Storage of our own (restartable, state on disk), the simulator time-scaled with throttling on.
  const [blob, queuePort, table] = await freePorts(3);
  const ports: AzuritePorts = { blob: blob!, queue: queuePort!, table: table! };
  const dataDir = mkdtempSync(join(tmpdir(), "poolsync-soak-azurite-"));
  let azurite: RunningAzurite | undefined = await ensureAzurite(ports, { dataDir });
  let azuriteDown = false;
  const sim: ArmSimulator = await startArmSimulator({
    tls: true,
    seed: soakWorld(),
    timeScale: T,
    throttling: { timeScale: T },
    operationDurationMs: 3_000,
    instanceWritePropagatesToScaleSetAfterMs: 2_000,
    latency: { fixedMs: 200, jitterMs: 800 },
    randomSeed: opts.seed,
  });
  const c = sim.control;
  const simClock = c.clock;

  const env: Record<string, string> = {
    POOLSYNC_SCOPES: `/subscriptions/${SOAK_SUBSCRIPTION}/resourceGroups/${RG}`,
    ARM_ENDPOINT: sim.url,
    POOLSYNC_ARM_CA_FILE: SIM_CA_FILE,
    AzureWebJobsStorage: azurite.connectionString,
    POOLSYNC_QUEUE: uniqueName("soak-"),
    POOLSYNC_MEMBERSHIPS_TABLE: uniqueName("soakm"),
    POOLSYNC_CACHE_TABLE: uniqueName("soakc"),
    // Short, in simulated time (the app's clock is the simulator's): a 2 s real ARM timeout is 120 simulated s.
    POOLSYNC_ARM_TIMEOUT_SECONDS: "2",
    POOLSYNC_OPERATION_POLL_SECONDS: "2",
    POOLSYNC_OPERATION_MAX_WAIT_SECONDS: "120",
    POOLSYNC_EVENT_DEBOUNCE_SECONDS: "10",
    POOLSYNC_CACHE_TTL_SECONDS: "600",
    POOLSYNC_FAILED_RETRY_SECONDS: "300",
    POOLSYNC_MAX_ATTEMPTS: "8",
  };
  const config: Config = loadConfig(env);
  const queue = new QueueClient(azurite.connectionString, config.queueName);
  const poisonQueue = new QueueClient(azurite.connectionString, config.poisonQueueName);
  const VISIBILITY_S = 3; // the host's visibilityTimeout, short: a killed invocation's message comes back soon
  const MAX_DEQUEUE = 5;

  let procSeq = 0;
  const newProc = (): Proc => {
    let release: () => void = () => undefined;
    const died = new Promise<void>((r) => (release = r));
    const p: Proc = {
      id: ++procSeq,
      dead: false,
      died,
      killAfter: undefined,
      kill() {
        if (p.dead) return;
        p.dead = true;
        release();
      },
      services: undefined as unknown as Services,
    };
    const clock: Clock = {
      now: () => simClock.now(),
      sleep: async (ms) => {
        if (p.dead) return never();
        await simClock.sleep(ms);
        if (p.dead) return never();
      },
    };
    const arm = armComputeFromConfig(config, clock);
    const guard = <A extends unknown[], R>(call: (...a: A) => Promise<R>) =>
      async (...a: A): Promise<R> => {
        if (p.dead) return never();
        let r: R;
        try {
          r = await call(...a);
        } catch (err) {
          if (p.dead) return never();
          throw err;
        }
        if (p.killAfter !== undefined && --p.killAfter <= 0) {
          p.kill(); // the call happened (a write is on ARM); the process dies before it learns the answer
        }
        if (p.dead) return never();
        return r;
      };
    const compute: ComputePort = {
      getScaleSet: guard((r) => arm.getScaleSet(r)),
      writeScaleSetNics: guard((r, b, n, o) => arm.writeScaleSetNics(r, b, n, o)),
      listInstances: guard((r) => arm.listInstances(r)),
      getInstance: guard((r) => arm.getInstance(r)),
      writeInstanceNics: guard((r, b, n, o) => arm.writeInstanceNics(r, b, n, o)),
    };
    p.services = createServices(config, { clock, compute, log: countingLogger(counters, appErrors), random: prng(opts.seed * 31 + p.id), queueTimeScale: T });
    return p;
  };
  // Every host polls the queue; each event goes to one of them in turn; the timer runs on one (its listener lock).
  const procs: Proc[] = Array.from({ length: Math.max(1, Math.floor(opts.hosts ?? 1)) }, newProc);
  await procs[0]!.services.ready();
  let nextProc = 0;
  const anyProc = () => procs[nextProc++ % procs.length] as Proc;

  // --- Expectations ------------------------------------------------------------------------------------------
  interface Declared { state: "present" | "absent"; requestId: string; declaredAt: string }
  const latest = new Map<string, Declared>(); // `${ss}|${pool}` lowercased
  const unsent: unknown[] = []; // producer retries (storage down)
  const othersIpConfigs = new Map<string, Set<string>>(); // resource id (lower) → names another writer added
  const othersTags = new Map<string, Set<string>>(); // scale set id (lower) → tag names another writer set
  const expectedCapacity = new Map<string, number | undefined>();
  const deleted = new Set<string>();
  const badSent: Array<{ requestId: string; reason: RegExp }> = [];
  let declSeq = 0;
  let otherSeq = 0;
  const declaredAtBase = Date.parse("2026-12-02T10:00:00Z");

  const sendRaw = async (text: string) => {
    await queue.sendMessage(Buffer.from(text, "utf8").toString("base64"));
  };
  const send = async (message: unknown): Promise<boolean> => {
    try {
      await queue.sendMessage(encodeMessage(message));
      return true;
    } catch {
      unsent.push(message);
      bump("producer:send-failed");
      return false;
    }
  };

  // --- Events: Event Grid's delivery, with its faults -------------------------------------------------------
  interface Pending { due: number; event: unknown; seq: number; tries: number }
  const pendingEvents: Pending[] = [];
  let emitted = 0;
  let lastDeliveredSeq = -1;
  c.onEvent((e: EventGridEvent) => {
    const seq = emitted++;
    const now = simClock.now();
    let event: unknown = e;
    if (chance(0.15)) {
      // Odd casing and a trailing slash on the URI, some in the CloudEvents schema.
      const odd = e.data.resourceUri.toUpperCase().replace("/VIRTUALMACHINESCALESETS/", "/virtualmachinescalesets/") + "/";
      const data = { ...e.data, resourceUri: odd };
      event = chance(0.5)
        ? { specversion: "1.0", type: e.eventType, source: e.topic, subject: odd, id: e.id, time: e.eventTime, data }
        : { ...e, subject: odd, data };
      tryFault("event URI odd casing / trailing slash / CloudEvents", "*");
    }
    if (chance(0.04)) {
      tryFault("event lost", "*");
      return;
    }
    if (chance(0.05)) {
      tryFault("event delayed past the next timer run", "*");
      pendingEvents.push({ due: now + 400_000, event, seq, tries: 0 });
      return;
    }
    pendingEvents.push({ due: now + 1_000 + rand() * 20_000, event, seq, tries: 0 });
    if (chance(0.08)) {
      tryFault("event duplicated", "*");
      pendingEvents.push({ due: now + rand() * 90_000, event, seq, tries: 0 });
    }
  });
  const deliverEvents = async (all: boolean) => {
    const now = simClock.now();
    const due = pendingEvents.filter((p) => all || p.due <= now);
    if (due.length === 0) return;
    for (const p of due) pendingEvents.splice(pendingEvents.indexOf(p), 1);
    const p0 = anyProc();
    await Promise.race([
      p0.died,
      Promise.all(
        due.map(async (p) => {
          if (p.seq < lastDeliveredSeq) tryFault("event reordered", "*");
          lastDeliveredSeq = Math.max(lastDeliveredSeq, p.seq);
          try {
            const outcome = await p0.services.handleResourceEvent(p.event);
            bump(`event:${outcome}`);
          } catch {
            // The webhook answered 500: Event Grid retries (10 s, 30 s, 1 min, ...), for a bounded number of times here.
            bump("event:delivery-failed");
            if (p.tries < 8) pendingEvents.push({ ...p, due: simClock.now() + 10_000 * 2 ** p.tries, tries: p.tries + 1 });
            else bump("event:given-up");
          }
        }),
      ),
    ]);
  };

  // --- The queue trigger ------------------------------------------------------------------------------------
  const decode = decodeQueueBody;
  let maxAttemptSeen = 0;
  const pumpQueue = async (p0: Proc): Promise<number> => {
    let got;
    try {
      got = await queue.receiveMessages({ numberOfMessages: 16, visibilityTimeout: VISIBILITY_S });
    } catch {
      bump("queue:receive-failed");
      return -1;
    }
    const items = got.receivedMessageItems;
    await Promise.race([
      p0.died,
      Promise.all(
        items.map(async (m) => {
          bump("queue:handled");
          const body = decode(m.messageText);
          const attempt = (body as { attempt?: number })?.attempt ?? 0;
          maxAttemptSeen = Math.max(maxAttemptSeen, attempt);
          try {
            if (m.dequeueCount > MAX_DEQUEUE) {
              bump("queue:exhausted-to-poison");
              await poisonQueue.sendMessage(m.messageText);
              await queue.deleteMessage(m.messageId, m.popReceipt);
              return;
            }
            const outcome = await p0.services.handleQueueMessage(body, { id: m.messageId, dequeueCount: m.dequeueCount, insertionTime: m.insertedOn.toISOString() });
            bump(`queue:${outcome.result}`);
            await queue.deleteMessage(m.messageId, m.popReceipt);
          } catch {
            bump("queue:invocation-failed"); // left on the queue: visible again after the visibility timeout
          }
        }),
      ),
    ]);
    return items.length;
  };

  const runTimer = async () => {
    const p0 = procs[0] as Proc;
    try {
      const s = await Promise.race([p0.died.then(() => undefined), p0.services.reconcileStale()]);
      bump("timer:runs");
      if (s) bump("timer:enqueued", s.enqueued);
      return s;
    } catch {
      bump("timer:failed");
      return undefined;
    }
  };

  // --- Actions ------------------------------------------------------------------------------------------------
  const live = () => SCALE_SETS.filter((s) => !deleted.has(ssId(s).toLowerCase()));
  const restartAzurite = async () => {
    azuriteDown = true;
    await azurite?.stop();
    azurite = undefined;
    await new Promise((r) => setTimeout(r, 500 + rand() * 1500));
    azurite = await ensureAzurite(ports, { dataDir });
    azuriteDown = false;
  };

  const declare = async () => {
    const ss = pick(SCALE_SETS);
    const pool = pick(POOLS);
    const state = chance(0.7) ? "present" : "absent";
    const requestId = `soak-${opts.seed}-${++declSeq}`;
    const declaredAt = new Date(declaredAtBase + declSeq * 1000).toISOString();
    const m = { v: 1, kind: "declare", scaleSetId: ssId(ss), backendPoolId: pId(pool), state, requestId, declaredAt };
    plan.push(`declare ${ss} ${pool} ${state}`);
    latest.set(`${ssId(ss)}|${pId(pool)}`.toLowerCase(), { state, requestId, declaredAt });
    await send(m);
  };

  const badMessage = async () => {
    const requestId = `soak-bad-${opts.seed}-${++declSeq}`;
    const kind = pick(["outside-ss", "outside-pool", "garbage"] as const);
    plan.push(`bad ${kind}`);
    tryFault("bad message (out of scope, malformed)", "*");
    try {
      if (kind === "outside-ss") {
        await sendRaw(JSON.stringify({ v: 1, kind: "declare", scaleSetId: OUTSIDE_SS, backendPoolId: pId("pool-0"), state: "present", requestId }));
        badSent.push({ requestId, reason: /^scaleSetId: .* is outside POOLSYNC_SCOPES$/ });
      } else if (kind === "outside-pool") {
        await sendRaw(JSON.stringify({ v: 1, kind: "declare", scaleSetId: ssId(pick(SCALE_SETS)), backendPoolId: OUTSIDE_POOL, state: "present", requestId }));
        badSent.push({ requestId, reason: /^backendPoolId: .* is outside POOLSYNC_SCOPES$/ });
      } else {
        await sendRaw(`{"requestId":"${requestId}", not json`);
        badSent.push({ requestId, reason: /^message is not JSON$/ });
      }
    } catch {
      bump("producer:bad-send-failed");
    }
  };

  const otherMust: Array<(typeof OTHER_KINDS)[number]> = [...OTHER_KINDS].sort(() => rand() - 0.5);
  const otherWriter = () => {
    const names = live();
    if (names.length === 0) return;
    const ss = ssId(pick(names));
    const what = otherMust.shift() ?? pick(OTHER_KINDS);
    plan.push(`other ${what} ${ss.split("/").pop()}`);
    try {
      if (what === "ipconfig-model" || what === "ipconfig-instance") {
        const name = `other${++otherSeq}`;
        let target = ss;
        if (what === "ipconfig-instance") {
          const insts = c.instances(ss).filter((i) => String((i.properties as JsonObject).provisioningState) !== "Deleting");
          if (insts.length === 0) return;
          target = String(pick(insts).id);
        }
        c.write(target, addIpConfig(name, SUBNET));
        tryFault("another writer's ip configuration", ss);
        const set = othersIpConfigs.get(target.toLowerCase()) ?? new Set<string>();
        set.add(name);
        othersIpConfigs.set(target.toLowerCase(), set);
      } else if (what === "tag") {
        const tag = `other${++otherSeq}`;
        c.write(ss, (r) => {
          r.tags = { ...((r.tags as JsonObject | undefined) ?? {}), [tag]: "kept" };
        });
        const set = othersTags.get(ss.toLowerCase()) ?? new Set<string>();
        set.add(tag);
        othersTags.set(ss.toLowerCase(), set);
      } else if (what === "drop") {
        const pool = pId(pick(POOLS));
        const targets = [ss, ...c.instances(ss).map((i) => String(i.id))];
        c.write(pick(targets), dropPool(pool));
        tryFault("another writer drops our pool (drift)", ss);
      } else {
        const capacity = 1 + Math.floor(rand() * 4);
        c.scale(ss, capacity);
        expectedCapacity.set(ss.toLowerCase(), capacity);
        tryFault("scale out / in by another writer", ss);
      }
    } catch (err) {
      // The simulator refuses writes to a scale set being deleted: that is not a fault of ours.
      bump("other:refused");
      plan.push(`  refused: ${(err as Error).message.slice(0, 120)}`);
    }
  };

  // Every kind once early, in a seeded order (the scale set deletion last, so the others have targets); then by weight.
  const mustTry: Array<(typeof SIM_FAULT_KINDS)[number]> = SIM_FAULT_KINDS.filter((k) => k !== "ss-delete").sort(() => rand() - 0.5);
  mustTry.push("ss-delete");
  const simFault = () => {
    const names = live();
    if (names.length === 0) return;
    const name = pick(names);
    const ss = ssId(name);
    const exact = `virtualMachineScaleSets/${name}$`;
    const instances = `virtualMachineScaleSets/${name}/virtualMachines/[^/]+$`;
    const kind = mustTry.shift() ?? pick(SIM_FAULT_KINDS);
    plan.push(`fault ${kind} ${name}`);
    const add = (f: FaultName, rule: Parameters<typeof c.injectFault>[0]) => {
      const times = rule.times ?? 1;
      simHandles.push({ f, h: c.injectFault(rule), times });
      tryFault(f, ss);
    };
    switch (kind) {
      case "412": {
        const times = 2 + Math.floor(rand() * 6);
        const tag = `storm${++otherSeq}`;
        interleaves.push({
          h: c.beforeNextWrite(new RegExp(`${exact.replace("$", "")}$`, "i"), (r) => {
            r.tags = { ...((r.tags as JsonObject | undefined) ?? {}), [tag]: "kept" };
          }, { times }),
          times,
          ss,
          tag,
        });
        tryFault("412 storm (interleaved writer)", ss);
        break;
      }
      case "429":
        add("429 with long Retry-After", { method: "PUT", path: chance(0.5) ? exact : instances, retryAfterSeconds: 600 + Math.floor(rand() * 600) });
        break;
      case "409":
        add("409 concurrent operation", { method: "PUT", path: chance(0.5) ? exact : instances, status: 409, times: 1 + Math.floor(rand() * 2) });
        break;
      case "500":
        add("500 on a write", { method: "PUT", path: chance(0.5) ? exact : instances, status: 500 });
        break;
      case "503":
        add("503 on a read", { method: "GET", path: chance(0.5) ? exact : `virtualMachineScaleSets/${name}/virtualMachines$`, status: 503 });
        break;
      case "drop":
        add("dropped connection", { method: chance(0.5) ? "PUT" : "GET", path: chance(0.5) ? exact : instances, drop: true });
        break;
      case "slow":
        // Longer than the 2 s (real) client timeout; the write still happens.
        add("slow answer past the client timeout, write happened", { method: "PUT", path: chance(0.5) ? exact : instances, afterWrite: true, delayMs: 3.5 * 1000 * T });
        break;
      case "opfail":
        c.failNextOperation(new RegExp(`${exact.replace("$", "")}(/virtualMachines/[^/]+)?$`, "i"), { times: 1 });
        tryFault("operation ended Failed", ss);
        break;
      case "instance-delete": {
        const insts = c.instances(ss).filter((i) => String((i.properties as JsonObject).provisioningState) !== "Deleting");
        if (insts.length === 0) return;
        c.delete(String(pick(insts).id));
        expectedCapacity.set(ss.toLowerCase(), undefined);
        tryFault("instance deleted", ss);
        break;
      }
      case "kill": {
        pick(procs).killAfter = 1 + Math.floor(rand() * 4);
        tryFault("invocation killed mid-reconcile", "*");
        break;
      }
      case "ss-delete": {
        // vmss-2 only, once, while the pipeline is busy with it (mid-reconcile, often mid-write).
        const victim = ssId("vmss-2");
        if (deleted.has(victim.toLowerCase())) return;
        c.delete(victim);
        deleted.add(victim.toLowerCase());
        tryFault("scale set deleted mid-run", victim);
        break;
      }
    }
  };

  // --- Run ----------------------------------------------------------------------------------------------------
  let stopChaos = false;
  let stopAll = false;
  const queueLoop = Promise.all(
    procs.map(async (_, i) => {
      while (!stopAll) {
        const n = await pumpQueue(procs[i] as Proc);
        if (n <= 0) await new Promise((r) => setTimeout(r, 40));
      }
    }),
  );
  const eventLoop = (async () => {
    while (!stopAll) {
      await deliverEvents(false);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const timerLoop = (async () => {
    let next = simClock.now() + 300_000;
    while (!stopAll) {
      if (!stopChaos && simClock.now() >= next) {
        next = simClock.now() + 300_000;
        await runTimer();
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  // The resurrection of killed processes: the platform starts a new host.
  const reviveLoop = (async () => {
    while (!stopAll) {
      for (let i = 0; i < procs.length; i++) {
        if (procs[i]!.dead) {
          bump("platform:process-restarts");
          procs[i] = newProc();
        }
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();

  // Guarantee every fault kind early, in a seeded order; afterwards by weight.
  let steps = 0;
  let azuriteRestarted = false;
  try {
    for (; steps < maxSteps && Date.now() < deadline; steps++) {
      const r = rand();
      if (mustTry.length > 0 && steps % 2 === 1) simFault();
      else if (otherMust.length > 0 && steps % 4 === 2) otherWriter();
      else if (r < 0.35) await declare();
      else if (r < 0.55) otherWriter();
      else if (r < 0.85) simFault();
      else if (r < 0.9) await badMessage();
      else if (r < 0.93 || (!azuriteRestarted && steps > 12)) {
        plan.push("platform azurite-restart");
        tryFault("Azurite stopped and restarted", "*");
        azuriteRestarted = true;
        await restartAzurite();
      }
      // Producers retry what they could not send.
      while (unsent.length > 0 && !azuriteDown) {
        const m = unsent.shift();
        if (!(await send(m))) break;
      }
      await new Promise((res) => setTimeout(res, 80 + rand() * 120));
    }
  } finally {
    stopChaos = true;
  }
  say(`chaos over after ${steps} steps, ${((Date.now() - realStart) / 1000).toFixed(1)} s; quiescing`);

  // --- Quiesce: faults off, everything delivered, the timer sees everything expired --------------------------
  for (const s of simHandles) fired.set(s.f, (fired.get(s.f) ?? 0) + (s.h.remaining() < s.times ? 1 : 0));
  // A storm's tag exists only if it was applied before one of our writes: only then must it survive.
  for (const { h, times, ss, tag } of interleaves) {
    h.cancel();
    if (h.applied() === 0) continue;
    fired.set("412 storm (interleaved writer)", (fired.get("412 storm (interleaved writer)") ?? 0) + (h.applied() > 0 ? 1 : 0));
    bump("412-storm:writes-interleaved", Math.min(h.applied(), times));
    const set = othersTags.get(ss.toLowerCase()) ?? new Set<string>();
    set.add(tag);
    othersTags.set(ss.toLowerCase(), set);
  }
  c.clearFaults();
  if (!azurite) azurite = await ensureAzurite(ports, { dataDir });
  for (let i = 0; unsent.length > 0 && i < 100; i++) await send(unsent.shift());

  let converged = false;
  const quiesceDeadline = Date.now() + 120_000;
  for (let round = 0; round < 8 && Date.now() < quiesceDeadline; round++) {
    c.settle();
    await deliverEvents(true);
    // Drain, waiting for invisible messages (Retry-After) up to their longest delay.
    const drainUntil = Date.now() + Math.ceil((1300 / T) * 1000) + VISIBILITY_S * 1000 + 5_000;
    for (;;) {
      const depth = (await queue.getProperties()).approximateMessagesCount ?? 0;
      if (depth === 0 && pendingEvents.length === 0) break;
      if (Date.now() > drainUntil || Date.now() > quiesceDeadline) break;
      await new Promise((r) => setTimeout(r, 100));
      c.settle();
      await deliverEvents(true);
    }
    // Every cached entry is now past its TTL and every failed declaration due for its retry.
    c.clock.advance(Math.max(config.cacheTtlMs, config.failedRetryMs) + 1_000);
    const s = await runTimer();
    const depth = (await queue.getProperties()).approximateMessagesCount ?? 0;
    say(`quiesce round ${round}: timer enqueued ${s?.enqueued ?? "?"}, queue depth ${depth}`);
    if (s && s.enqueued === 0 && depth === 0 && pendingEvents.length === 0) {
      converged = true;
      break;
    }
  }
  stopAll = true;
  await Promise.all([queueLoop, eventLoop, timerLoop, reviveLoop]);
  if (!converged) violations.push("no convergence: the queue or the timer still had work after 8 quiesce rounds (unbounded retry loop?)");
  if (maxAttemptSeen > config.maxAttempts + 1) violations.push(`a reconcile reached attempt ${maxAttemptSeen}, beyond POOLSYNC_MAX_ATTEMPTS ${config.maxAttempts}`);

  // --- Invariants ---------------------------------------------------------------------------------------------
  const badTargets = new Set<string>();
  const violate = (target: string, what: string) => {
    badTargets.add(target.toLowerCase());
    violations.push(what);
  };

  // No write outside POOLSYNC_SCOPES, and nothing of the outside pool anywhere.
  const outside = c.stats(OUTSIDE_SS);
  if (outside.requests !== 0) violate("*", `${outside.requests} ARM requests reached ${OUTSIDE_SS}, outside POOLSYNC_SCOPES`);

  const svc = (procs[0] as Proc).services;
  for (const name of SCALE_SETS) {
    const ss = ssId(name);
    const key = ss.toLowerCase();
    const rows = await svc.declarations.listForScaleSet(scaleSetRef(ss));
    const resource = c.resource(ss);
    if (deleted.has(key) || !resource) {
      for (const d of rows) {
        if (!["target-deleted", "target-deleting", "failed"].includes(d.outcome.kind) || !d.outcome.reason)
          violate(ss, `${name} (deleted): declaration ${d.requestId} shows ${d.outcome.kind} without a reason naming the deletion`);
      }
      continue;
    }
    // Other writers' changes survive.
    const tags = (resource.tags ?? {}) as Record<string, unknown>;
    bump("check:others-tags", othersTags.get(key)?.size ?? 0);
    bump("check:others-ipconfigs-model", othersIpConfigs.get(key)?.size ?? 0);
    for (const t of othersTags.get(key) ?? []) if (!(t in tags)) violate(ss, `${name}: lost update: another writer's tag ${t} is gone`);
    const modelIpcs = new Set(modelNics(resource).flatMap((n) => n.properties.ipConfigurations.map((i) => i.name)));
    for (const n of othersIpConfigs.get(key) ?? []) if (!modelIpcs.has(n)) violate(ss, `${name}: lost update: another writer's ip configuration ${n} is gone from the model`);
    const cap = expectedCapacity.get(key);
    const sku = resource.sku as { capacity?: number } | undefined;
    if (cap !== undefined && sku?.capacity !== cap) violate(ss, `${name}: lost update: capacity ${sku?.capacity}, another writer set ${cap}`);
    const instances = c.instances(ss).filter((i) => String((i.properties as JsonObject).provisioningState) !== "Deleting");
    for (const inst of instances) {
      const names = new Set(instanceNics(inst).flatMap((n) => n.properties.ipConfigurations.map((i) => i.name)));
      bump("check:others-ipconfigs-instance", othersIpConfigs.get(String(inst.id).toLowerCase())?.size ?? 0);
      for (const n of othersIpConfigs.get(String(inst.id).toLowerCase()) ?? []) if (!names.has(n)) violate(ss, `${inst.id}: lost update: another writer's ip configuration ${n} is gone`);
    }
    // Every accepted declaration applied (model and every live instance) or visibly failed with a reason.
    const modelPools = new Set(poolsByIpConfig(modelNics(resource)).ipConfig0 ?? []);
    for (const pool of POOLS) {
      const want = latest.get(`${key}|${pId(pool)}`.toLowerCase());
      if (!want) continue;
      const row = rows.find((d) => d.backendPoolId.toLowerCase() === pId(pool).toLowerCase() && d.ipConfiguration === "");
      if (!row) {
        if (want.state === "absent" && !modelPools.has(pId(pool).toLowerCase())) {
          bump("check:declaration-absent-finished-and-removed");
          continue; // finished absent, removed by the timer
        }
        violate(ss, `${name} ${pool}: declaration ${want.requestId} (${want.state}) was accepted but no row holds it`);
        continue;
      }
      if (row.requestId !== want.requestId) violate(ss, `${name} ${pool}: row holds ${row.requestId}, the newest accepted is ${want.requestId}`);
      bump(`check:declaration-${row.outcome.kind}`);
      if (row.outcome.kind === "applied") {
        const onModel = modelPools.has(pId(pool).toLowerCase());
        if (onModel !== (want.state === "present")) violate(ss, `${name} ${pool}: shows applied (${want.state}) but the model ${onModel ? "has" : "lacks"} it`);
        for (const inst of instances) {
          const has = (poolsByIpConfig(instanceNics(inst)).ipConfig0 ?? []).includes(pId(pool).toLowerCase());
          if (has !== (want.state === "present")) {
            // What the app's cache believes about that instance, to tell a stale cache from a write that never came.
            const part = await svc.cache.readPartition(scaleSetRef(ss));
            const row = part.instances.get(String((inst as { instanceId?: unknown }).instanceId ?? String(inst.name).split("_").pop()));
            const cachedHas = row?.model ? (poolsByIpConfig(row.model.nics as never).ipConfig0 ?? []).includes(pId(pool).toLowerCase()) : undefined;
            violate(
              ss,
              `${name} ${pool}: shows applied (${want.state}) but instance ${String(inst.name)} ${has ? "has" : "lacks"} it ` +
                `(ARM: state ${String((inst.properties as JsonObject).provisioningState)}, etag ${String(inst.etag)}; cache: ${row ? `stale ${row.stale}, etag ${row.model?.etag}, has pool ${cachedHas}, pending ${row.pendingClientRequestId ?? "-"}` : "no row"})`,
            );
          }
        }
      } else if (row.outcome.kind === "pending" || !row.outcome.reason) {
        violate(ss, `${name} ${pool}: declaration ${row.requestId} ends ${row.outcome.kind} with no reason`);
      } else {
        bump(`final:${row.outcome.kind}`);
      }
    }
  }
  // Bad messages: each in the poison queue with its reason; nothing else poisoned but what the platform gave up on.
  const poisoned: Array<{ reason?: string; received?: string }> = [];
  for (let i = 0; i < 50; i++) {
    const got = await poisonQueue.receiveMessages({ numberOfMessages: 32, visibilityTimeout: 300 }).catch(() => undefined);
    if (!got || got.receivedMessageItems.length === 0) break;
    for (const m of got.receivedMessageItems) poisoned.push(decode(m.messageText) as { reason?: string; received?: string });
  }
  for (const b of badSent) {
    const hit = poisoned.find((p) => typeof p.received === "string" && p.received.includes(b.requestId));
    if (!hit) violate("*", `bad message ${b.requestId} is not in the poison queue`);
    else if (!b.reason.test(hit.reason ?? "")) violate("*", `bad message ${b.requestId} poisoned with reason "${hit.reason}", wanted ${b.reason}`);
  }
  for (const p of poisoned) {
    if (typeof p.received === "string" && p.received.includes("soak-bad-")) continue;
    bump("poison:other");
  }
  for (const pool of c.poolMembers(OUTSIDE_POOL)) violate("*", `outside pool has member ${pool}`);
  if (appErrors.length > 0) counters["app-errors"] = appErrors.length;

  const faults: FaultRow[] = FAULTS.map((f) => {
    const targets = faultTargets.get(f) ?? [];
    const t = tried.get(f) ?? 0;
    const runWide = violations.length > 0;
    const held = targets.filter((x) => (x === "*" ? !runWide : !badTargets.has(x) && !badTargets.has("*"))).length;
    const isSim = simHandles.some((s) => s.f === f) || f === "412 storm (interleaved writer)";
    const firedCount = isSim ? (fired.get(f) ?? 0) : f === "invocation killed mid-reconcile" ? (counters["platform:process-restarts"] ?? 0) : t;
    return { fault: f, tried: t, fired: firedCount, held };
  });

  await sim.stop();
  await azurite?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  return {
    seed: opts.seed,
    steps,
    realSeconds: Math.round((Date.now() - realStart) / 100) / 10,
    simulatedMinutes: Math.round(((Date.now() - realStart) / 1000) * T / 60),
    faults,
    counters: Object.fromEntries(Object.entries(counters).sort()),
    violations,
    appErrors,
    plan,
  };
}

export function formatTable(r: SoakResult): string {
  const lines = ["| fault / input | tried | fired | held |", "|---|---:|---:|---:|"];
  for (const f of r.faults) lines.push(`| ${f.fault} | ${f.tried} | ${f.fired} | ${f.held} |`);
  return lines.join("\n");
}
