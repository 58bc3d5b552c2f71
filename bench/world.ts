// The simulated world every strategy runs against: seeds, the simulator's settings, what "applied" means, and the
// other writers whose changes must survive.
import { startArmSimulator, type ArmSimulator, type ArmSimulatorOptions, type JsonObject, type SeedSpec } from "../sim";
import { instanceNics, modelNics, nicPoolsByIpConfig, poolsByIpConfig } from "../sim/wire";
import { poolId, scaleSetId } from "../devkit/worlds";

export const RG = "bench";
export const IP_CONFIG = "ipConfig0";

export function subscriptionId(i: number): string {
  return `${String(i + 1).padStart(8, "0")}-bbbb-4ccc-8ddd-${String(i + 1).padStart(12, "0")}`;
}

export interface WorldSpec {
  subscriptions: number;
  scaleSetsPerSubscription: number;
  capacity: number;
  pools: number;
  /** Flexible scale sets: their VMs' membership lives on NIC resources. */
  orchestrationMode?: "Flexible";
  /** Resource groups per subscription, the scale sets split over them (default 1). */
  groupsPerSubscription?: number;
}

export interface World {
  seed: SeedSpec;
  scaleSets: string[];
  pools: string[][]; // per subscription
  subnet: string[]; // per subscription
  subscriptions: string[];
}

export function buildWorld(w: WorldSpec): World {
  const subs = Array.from({ length: w.subscriptions }, (_, i) => subscriptionId(i));
  const groups = Math.max(1, w.groupsPerSubscription ?? 1);
  const scaleSets: string[] = [];
  const pools: string[][] = [];
  const subnet: string[] = [];
  const seed: SeedSpec = {
    subscriptions: subs.map((sub) => {
      pools.push(Array.from({ length: w.pools }, (_, p) => poolId(sub, RG, "lb", `pool-${p}`)));
      const nodes = `/subscriptions/${sub}/resourceGroups/${RG}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`;
      subnet.push(nodes);
      // The first group holds the network; the others only scale sets, on its subnet (the scale sets in blocks).
      const perGroup = Math.ceil(w.scaleSetsPerSubscription / groups);
      const resourceGroups = Array.from({ length: groups }, (_, g) => {
        const name = g === 0 ? RG : `${RG}-${g}`;
        const count = Math.max(0, Math.min(perGroup, w.scaleSetsPerSubscription - g * perGroup));
        const names = Array.from({ length: count }, (_, i) => `vmss-${g * perGroup + i}`);
        for (const n of names) scaleSets.push(scaleSetId(sub, name, n));
        return {
          name,
          location: "westeurope",
          ...(g === 0
            ? {
                virtualNetworks: [
                  {
                    name: "vnet",
                    addressPrefixes: ["10.0.0.0/8"],
                    subnets: [{ name: "nodes", addressPrefix: "10.2.0.0/16" }],
                  },
                ],
                loadBalancers: [{ name: "lb", backendPools: Array.from({ length: w.pools }, (_, p) => `pool-${p}`) }],
              }
            : {}),
          scaleSets: names.map((n) => ({
            name: n,
            capacity: w.capacity,
            ...(w.orchestrationMode ? { orchestrationMode: w.orchestrationMode } : {}),
            nics: [
              { name: "nic-0", primary: true, ipConfigurations: [{ name: IP_CONFIG, primary: true, subnet: nodes }] },
            ],
          })),
        };
      });
      return { id: sub, resourceGroups };
    }),
  };
  return { seed, scaleSets, pools, subnet, subscriptions: subs };
}

export const subscriptionOf = (id: string): string => id.split("/")[2] ?? "";

/** CRP as the benchmark sees it: throttling on (time-scaled), ARM's buckets on, realistic latency and operations. */
export interface SimProfile {
  timeScale: number;
  latency: { fixedMs: number; jitterMs: number };
  operationDurationMs: number;
  /** The slow profile's scale set and instance writes (sim OPERATION_PROFILES.slow); else operationDurationMs. */
  scaleSetWriteMs?: number;
  instanceWriteMs?: number;
}

export async function startSim(
  profile: SimProfile,
  seed: SeedSpec,
  randomSeed: number,
  extra: ArmSimulatorOptions = {},
): Promise<ArmSimulator> {
  return startArmSimulator({
    tls: true,
    seed,
    randomSeed,
    throttling: { timeScale: profile.timeScale, refill: "perMinute", arm: true },
    latency: profile.latency,
    operationDurationMs: profile.operationDurationMs,
    ...(profile.scaleSetWriteMs !== undefined ? { scaleSetWriteMs: profile.scaleSetWriteMs } : {}),
    ...(profile.instanceWriteMs !== undefined ? { instanceWriteMs: profile.instanceWriteMs } : {}),
    ...extra,
  });
}

/** A membership change: this pool present on (or absent from) ipConfig0 of this scale set and all its instances. */
export interface Change {
  id: number;
  scaleSetId: string;
  poolId: string;
  state: "present" | "absent";
}

function hasPool(nics: ReturnType<typeof modelNics>, pool: string): boolean {
  return (poolsByIpConfig(nics)[IP_CONFIG] ?? []).includes(pool.toLowerCase());
}

const NIC_TYPE = "Microsoft.Network/networkInterfaces";

/** The NIC resources of a Flexible scale set's VMs (primary NIC each); none for a Uniform scale set. */
export function flexNicIds(sim: ArmSimulator, ssId: string): string[] {
  return sim.control
    .virtualMachines(ssId)
    .filter((vm) => String((vm.properties as JsonObject).provisioningState) !== "Deleting")
    .map((vm) =>
      String(
        (
          (vm.properties as { networkProfile: { networkInterfaces: { id: string }[] } }).networkProfile
            .networkInterfaces[0] as { id: string }
        ).id,
      ),
    );
}

/** The ip configurations another writer edits: the first NIC (configuration) of a model, instance, or NIC resource. */
function firstIpConfigs(r: JsonObject): Array<{ name: string; properties: JsonObject }> {
  if (r.type === NIC_TYPE)
    return (r.properties as { ipConfigurations: Array<{ name: string; properties: JsonObject }> }).ipConfigurations;
  const nics = (r.properties as JsonObject).virtualMachineProfile ? modelNics(r) : instanceNics(r);
  return (nics[0]?.properties.ipConfigurations ?? []) as unknown as Array<{ name: string; properties: JsonObject }>;
}

/** Pools on ipConfig0 of every member: a Uniform scale set's instances, or a Flexible one's VMs' NICs. */
function memberPools(sim: ArmSimulator, ssId: string): Array<Set<string>> {
  const nics = flexNicIds(sim, ssId);
  if (nics.length > 0)
    return nics.map((id) => new Set(nicPoolsByIpConfig(sim.control.resource(id) as JsonObject)[IP_CONFIG] ?? []));
  return sim.control.instances(ssId).map((vm) => new Set(poolsByIpConfig(instanceNics(vm))[IP_CONFIG] ?? []));
}

/** Pools on ipConfig0 of the model and of every instance (or Flexible VM's NIC) (lower-case IDs). */
export function observed(sim: ArmSimulator, ssId: string): { model: Set<string>; instances: Array<Set<string>> } {
  const ss = sim.control.resource(ssId) as JsonObject;
  const model = new Set(poolsByIpConfig(modelNics(ss))[IP_CONFIG] ?? []);
  return { model, instances: memberPools(sim, ssId) };
}

export function satisfied(sim: ArmSimulator, c: Pick<Change, "scaleSetId" | "poolId" | "state">): boolean {
  const want = c.state === "present";
  const ss = sim.control.resource(c.scaleSetId) as JsonObject;
  if (hasPool(modelNics(ss), c.poolId) !== want) return false;
  return memberPools(sim, c.scaleSetId).every((pools) => pools.has(c.poolId.toLowerCase()) === want);
}

/**
 * Watches the simulator and records, per change, the simulated time it was first visible on the model and every
 * instance. Polls in-process (no ARM call, nothing counted).
 */
export class ConvergenceMonitor {
  readonly appliedAt = new Map<number, number>();
  readonly declaredAt = new Map<number, number>();
  private pending = new Map<number, Change>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly sim: ArmSimulator,
    private readonly everyMs = 20,
  ) {}

  watch(c: Change): void {
    this.declaredAt.set(c.id, this.sim.control.clock.now());
    this.pending.set(c.id, c);
    this.timer ??= setTimeout(() => this.tick(), this.everyMs);
  }

  /**
   * The next check waits at least twice as long as this one took: the simulator answers on this event loop, and
   * checks back to back (500 pending changes of 50 scale sets of 10 instances each render 6,000 resources) starved it
   * on a loaded machine until its listening socket held ~190 connections it had not accepted and poolsync's requests
   * timed out.
   */
  private tick(): void {
    const started = Date.now();
    this.check();
    this.timer = this.stopped
      ? undefined
      : setTimeout(() => this.tick(), Math.max(this.everyMs, 2 * (Date.now() - started)));
  }

  private stopped = false;

  check(): void {
    const now = this.sim.control.clock.now();
    // Each scale set rendered once per check, however many of its changes are pending.
    const seen = new Map<string, ReturnType<typeof observed>>();
    for (const [id, c] of this.pending) {
      let o = seen.get(c.scaleSetId);
      if (!o) seen.set(c.scaleSetId, (o = observed(this.sim, c.scaleSetId)));
      const pool = c.poolId.toLowerCase();
      const want = c.state === "present";
      if (o.model.has(pool) === want && o.instances.every((i) => i.has(pool) === want)) {
        this.appliedAt.set(id, now);
        this.pending.delete(id);
      }
    }
  }

  get outstanding(): number {
    return this.pending.size;
  }

  /** The changes not (yet) visible everywhere, for the report's accounting. */
  unconverged(): Change[] {
    return [...this.pending.values()];
  }

  latencies(): number[] {
    return [...this.appliedAt].map(([id, at]) => at - (this.declaredAt.get(id) ?? at));
  }

  lastAppliedAt(): number {
    return Math.max(...this.appliedAt.values());
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** One logged operation of another writer: it added or removed one of its own ip configurations. */
export interface WriterOp {
  writer: number;
  target: string;
  name: string;
  op: "add" | "remove";
  at: number;
}

/**
 * Other writers (cluster tooling, autoscaler hooks, people with curl): each adds and later removes ip
 * configurations of its own on the scale set model and its instances, atomically inside the simulator (so they
 * never lose anyone's change themselves) and logs every operation.
 */
export class OtherWriters {
  readonly log: WriterOp[] = [];
  private live = new Map<string, string[]>(); // writer|target → its names currently added
  private seq = 0;
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly sim: ArmSimulator,
    private readonly world: World,
    private readonly targets: () => string,
    private readonly random: () => number,
  ) {}

  /** `writers` loops, each writing every `meanGapMs` simulated ms on average (exponential gaps). */
  start(writers: number, meanGapMs: number): void {
    this.running = true;
    for (let w = 0; w < writers; w++) this.loops.push(this.loop(w, meanGapMs));
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await Promise.all(this.loops);
  }

  /** Ends the writers' waits at once: at 1x a gap of minutes is minutes of real time to sit out at the end. */
  private wake: () => void = () => undefined;
  private readonly stopped = new Promise<void>((r) => (this.wake = r));

  private async loop(writer: number, meanGapMs: number): Promise<void> {
    const clock = this.sim.control.clock;
    while (this.running) {
      await Promise.race([clock.sleep(-Math.log(1 - this.random()) * meanGapMs), this.stopped]);
      if (!this.running) return;
      this.writeOnce(writer);
    }
  }

  writeOnce(writer: number): void {
    const target = this.targets();
    const key = `${writer}|${target}`;
    const mine = this.live.get(key) ?? [];
    const remove = mine.length > 0 && (mine.length >= 2 || this.random() < 0.5);
    const subIndex = this.world.subscriptions.indexOf(subscriptionOf(target));
    const subnet = this.world.subnet[Math.max(0, subIndex)] as string;
    const at = this.sim.control.clock.now();
    try {
      if (remove) {
        const name = mine.shift() as string;
        this.sim.control.write(target, (r) => {
          const ipcs = firstIpConfigs(r);
          ipcs.splice(0, ipcs.length, ...ipcs.filter((c) => c.name !== name));
        });
        this.log.push({ writer, target, name, op: "remove", at });
      } else {
        const name = `w${writer}-${this.seq++}`;
        this.sim.control.write(target, (r) => {
          firstIpConfigs(r).push({
            name,
            properties: { primary: false, privateIPAddressVersion: "IPv4", subnet: { id: subnet } },
          });
        });
        mine.push(name);
        this.log.push({ writer, target, name, op: "add", at });
      }
      this.live.set(key, mine);
    } catch {
      // The target is being deleted or busy in a way the simulator refuses: the writer skips this turn.
    }
  }

  /** Their operations whose effect is not in the end state: an add that vanished, a remove that came back. */
  lostUpdates(): { lost: number; ops: number } {
    const removed = new Set(
      this.log.filter((o) => o.op === "remove").map((o) => `${o.target.toLowerCase()}|${o.name}`),
    );
    const names = new Map<string, Set<string>>();
    const namesOf = (target: string): Set<string> => {
      let s = names.get(target);
      if (!s) {
        const r = this.sim.control.resource(target) as JsonObject | undefined;
        s = new Set(r ? firstIpConfigs(r).map((c) => c.name) : []);
        names.set(target, s);
      }
      return s;
    };
    let lost = 0;
    for (const o of this.log) {
      const present = namesOf(o.target).has(o.name);
      if (o.op === "add" && !removed.has(`${o.target.toLowerCase()}|${o.name}`) && !present) lost++;
      if (o.op === "remove" && present) lost++;
    }
    return { lost, ops: this.log.length };
  }
}
