// The control handle tests and benchmarks drive the simulator with (in-process; /_sim/ exposes the same over HTTP).
import type { SimCore } from "./core";
import { resetCore } from "./core";
import { toCloudEvent, type CloudEvent, type EventGridEvent, type EventSchema } from "./events";
import type { FaultHandle, FaultRule } from "./faults";
import { canonical, instanceIdOf, loadBalancerId, scaleSetId } from "./ids";
import type { InterleaveHandle, Mutation } from "./interleave";
import type { JsonObject } from "./json";
import {
  backendIpConfigurationIds,
  renderLoadBalancer,
  renderPool,
  renderSubnet,
  renderVirtualNetwork,
} from "./network";
import {
  poolState,
  renderNetworkResource,
  writePoolAddressesAs,
  type PoolAddressChange,
  type PoolStateView,
} from "./networkControl";
import type { Operation } from "./operations";
import type { Settings } from "./options";
import { renderInstance, renderScaleSet } from "./scaleSets";
import { applySeed, DEMO_SEED, type SeedSpec } from "./seed";
import { renderNic } from "./nics";
import { deleteVmAs, renderVm, vmsOfScaleSet } from "./vms";
import type { StatsCounters } from "./stats";
import type { SpecRecord } from "./specConformance";
import type { BucketLow } from "./throttle";

export interface SimClockView {
  /** Simulated ms since the epoch. */
  now(): number;
  nowIso(): string;
  /** Simulated seconds per real second. */
  readonly timeScale: number;
  /** Jumps simulated time forward; operations, ETag bumps and bucket refills that fall due happen at once. */
  advance(ms: number): void;
  /** Resolves after `ms` simulated ms. */
  sleep(ms: number): Promise<void>;
}

export interface SimControl {
  readonly clock: SimClockView;
  seed(spec: "demo" | SeedSpec): void;
  /** Forgets resources, operations, events, stats, faults, interleaved writers and buckets; then seeds, if told. */
  reset(opts?: { seed?: "demo" | SeedSpec }): void;
  /** The stored resource as ARM answers it: scale set, instance, VM, NIC, load balancer (pools with derived
   *  backendIPConfigurations), backend pool, virtual network or subnet. Undefined if absent. */
  resource(id: string): JsonObject | undefined;
  /** The VMs of a Flexible scale set (top-level VMs), as ARM answers them. */
  virtualMachines(scaleSetId: string): JsonObject[];
  /** A scale set's instances as ARM answers them. */
  instances(scaleSetId: string): JsonObject[];
  /** IDs of the ip configurations in a pool by reference: a load balancer backend pool (what the load balancer says),
   *  an inbound NAT pool or an application gateway pool. */
  poolMembers(poolId: string): string[];
  /** Who and what is in a pool of any kind now: its ip configurations, its own addresses (with admin state), its
   *  kind, ETag and the writes running on its load balancer or gateway. Undefined if absent. */
  poolState(poolId: string): PoolStateView | undefined;
  /** Another writer adds, removes or sets the admin state of a pool's addresses with a PUT of the pool (or of its
   *  gateway): under the API's rules, so it throws the API's 409 while a write runs, and 412 when `ifMatch` is stale.
   *  Returns the pool's state after the write. */
  writePoolAddresses(
    poolId: string,
    change: PoolAddressChange,
    opts?: { ifMatch?: string; clientRequestId?: string },
  ): PoolStateView;
  /** Writes as another writer: `mutate` edits the resource as rendered; the result is committed like an API write
   *  (ETag bump if changed, scaling on a capacity change, an operation, its event). Returns the new resource. */
  write(id: string, mutate: Mutation, opts?: { clientRequestId?: string }): JsonObject;
  /** Applies `mutate` (as another writer) just before each of the next `times` (default 1) PUT/PATCH requests to a
   *  matching resource: an If-Match write then gets 412, a write without If-Match loses that change. */
  beforeNextWrite(idOrPattern: string | RegExp, mutate: Mutation, opts?: { times?: number }): InterleaveHandle;
  injectFault(rule: FaultRule): FaultHandle;
  clearFaults(): void;
  /** Ends the operation (by ID, or the one in progress on a resource) Failed. False when none is in progress. */
  failOperation(operationOrResourceId: string, error?: JsonObject): boolean;
  /** The next `times` (default 1) operations started on a matching resource end Failed. */
  failNextOperation(idOrPattern: string | RegExp, opts?: { error?: JsonObject; times?: number }): void;
  operations(): readonly Operation[];
  /** Capacity change as another writer: scale out builds from the current model, scale in removes the highest IDs. */
  scale(scaleSetId: string, capacity: number): JsonObject;
  /**
   * Deletes a scale set, an instance or a VM (with its NICs) as another writer (a long-running operation, then the
   * delete event).
   */
  delete(id: string): void;
  /** Counters of a resource and everything under it (canonical, any casing), or in total. */
  stats(id?: string): StatsCounters;
  /** Clears the counters and the buckets' low-water marks (`bucketLows`). */
  resetStats(): void;
  /**
   * Per CRP policy and window, the fewest tokens a subscription's bucket held after an admitted request since the last
   * reset: how much of each window a workload left (a 429 is in `stats().status429`, not here).
   */
  bucketLows(): Record<string, BucketLow>;
  /** With `specConformance`: what did not fit Azure's definitions, what no operation covers, how many were checked. */
  specRecord(): SpecRecord | undefined;
  /** Every event so far, in the Event Grid schema. */
  events(): readonly EventGridEvent[];
  /** The same events in the CloudEvents 1.0 schema. */
  cloudEvents(): CloudEvent[];
  /** The schema `/_sim/events` answers in unless the query asks for the other (`?schema=`). */
  readonly eventSchema: EventSchema;
  onEvent(listener: (e: EventGridEvent) => void): () => void;
  /** Advances simulated time until no operation or delayed ETag bump is pending. */
  settle(): void;
  /** Changes, from now on, how long writes' operations take and how a write to a deleting instance is refused (the
   *  soak switches to the slow profile and back mid-run); operations already running keep their end. */
  configure(settings: Partial<Pick<Settings, "scaleSetWriteMs" | "instanceWriteMs" | "deletingInstanceWrite">>): void;
  readonly ids: {
    scaleSet(subscriptionId: string, resourceGroup: string, name: string): string;
    instance(scaleSetId: string, instanceId: string | number): string;
    loadBalancer(subscriptionId: string, resourceGroup: string, name: string): string;
    pool(loadBalancerId: string, pool: string): string;
  };
}

export function createControl(core: SimCore): SimControl {
  const { engine } = core;
  const clock: SimClockView = {
    now: () => core.clock.now(),
    nowIso: () => core.clock.nowIso(),
    get timeScale() {
      return core.clock.timeScale;
    },
    advance: (ms) => core.clock.advance(ms),
    sleep: (ms) => core.clock.sleep(ms),
  };
  const seed = (spec: "demo" | SeedSpec): void => applySeed(spec === "demo" ? DEMO_SEED : spec, engine);
  return {
    clock,
    seed,
    reset(opts) {
      resetCore(core);
      if (opts?.seed) seed(opts.seed);
    },
    resource(id) {
      core.clock.runDue();
      const network = renderNetworkResource(engine, id);
      if (network) return network;
      const found = engine.resolve(id);
      if (found) return found.inst ? renderInstance(found.ss, found.inst) : renderScaleSet(found.ss);
      const key = canonical(id);
      const nic = engine.state.nics.get(key);
      if (nic) return renderNic(nic);
      const vm = engine.state.vms.get(key);
      if (vm) return renderVm(vm);
      const lb = engine.state.loadBalancers.get(key);
      if (lb) return renderLoadBalancer(engine.state, lb);
      const pool = engine.state.pool(key);
      if (pool) return renderPool(engine.state, pool.lb, pool.pool.name);
      const vnet = engine.state.virtualNetworks.get(key);
      if (vnet) return renderVirtualNetwork(vnet);
      const m = /^(.*)\/subnets\/([^/]+)$/.exec(key);
      const parent = m?.[1] !== undefined ? engine.state.virtualNetworks.get(m[1]) : undefined;
      return parent && m?.[2] ? renderSubnet(parent, m[2]) : undefined;
    },
    instances(id) {
      core.clock.runDue();
      const found = engine.resolve(id);
      if (!found) throw new Error(`no scale set ${id}`);
      return [...found.ss.instances.values()].map((i) => renderInstance(found.ss, i));
    },
    virtualMachines(id) {
      core.clock.runDue();
      return vmsOfScaleSet(engine.state, id).map((vm) => renderVm(vm));
    },
    poolMembers(poolId) {
      core.clock.runDue();
      const state = poolState(engine, poolId);
      return state?.kind === "loadBalancerBackendPool" || !state
        ? backendIpConfigurationIds(engine.state, poolId)
        : state.ipConfigurations;
    },
    poolState(poolId) {
      core.clock.runDue();
      return poolState(engine, poolId);
    },
    writePoolAddresses: (poolId, change, opts) => writePoolAddressesAs(engine, poolId, change, opts),
    write: (id, mutate, opts) => engine.writeAs(id, mutate, opts?.clientRequestId),
    beforeNextWrite: (idOrPattern, mutate, opts) => core.interleaver.add(idOrPattern, mutate, opts?.times ?? 1),
    injectFault: (rule) => core.faults.add(rule),
    clearFaults: () => core.faults.clear(),
    failOperation: (id, error) => engine.operations.fail(id, error),
    failNextOperation: (idOrPattern, opts) => engine.operations.failNext(idOrPattern, opts?.error, opts?.times ?? 1),
    operations: () => engine.operations.all(),
    scale: (id, capacity) =>
      engine.writeAs(id, (r) => {
        r["sku"] = { ...(r["sku"] as JsonObject), capacity };
      }),
    delete(id) {
      const vm = engine.state.vms.get(canonical(id));
      if (vm) return deleteVmAs(engine, vm, engine.syntheticWriter(id));
      const found = engine.resolve(id);
      if (!found) throw new Error(`no scale set or instance ${id}`);
      const writer = engine.syntheticWriter(id);
      if (found.inst) engine.deleteInstance(found.ss, found.inst.instanceId, { writer, resourceUri: found.inst.id });
      else engine.deleteAs(found.ss, writer);
    },
    stats: (id) => core.stats.get(id),
    resetStats: () => {
      core.stats.reset();
      core.throttler.resetLows();
    },
    bucketLows: () => core.throttler.lowestRemaining(),
    specRecord: () => core.spec?.record,
    events: () => engine.events,
    cloudEvents: () => engine.events.map(toCloudEvent),
    eventSchema: core.settings.eventSchema,
    onEvent: (listener) => engine.onEvent(listener),
    settle() {
      for (let t = core.clock.nextTaskAt(); t !== undefined; t = core.clock.nextTaskAt()) {
        core.clock.advance(Math.max(0, t - core.clock.now()));
      }
    },
    configure(settings) {
      Object.assign(core.settings, settings);
    },
    ids: {
      scaleSet: scaleSetId,
      instance: (ss, i) => instanceIdOf(ss, String(i)),
      loadBalancer: loadBalancerId,
      pool: (lb, pool) => `${lb}/backendAddressPools/${pool}`,
    },
  };
}
