// The simulated Compute RP: the one place that changes stored resources. The HTTP handlers and the control API both
// write through it, so a write "as another writer" has exactly the effects of an API write: model merge, ETag bump
// (only when something changed), scaling, a long-running operation, and the event ARM would publish when it ends.
import { randomUUID } from "node:crypto";
import { SimClock } from "./clock";
import {
  ArmError,
  armError,
  badRequest,
  concurrentRequest,
  instanceMarkedForDeletion,
  instanceNotActive,
  invalidReference,
  locationChanged,
  crpEtagValue,
  locationRequired,
  markedForDeletion,
  OPERATION_PREEMPTED,
  preconditionFailed,
  resourceGroupNotFound,
  resourceNotFound,
  rollingUpgradeInProgress,
  subscriptionNotFound,
} from "./errors";
import { armEvent, type EventGridEvent, type EventOutcome, type Writer } from "./events";
import { canonical, resourceGroupId, scaleSetId, virtualNetworkId, VMSS_TYPE } from "./ids";
import { deepEqual, getPath, isJsonObject, type JsonObject } from "./json";
import { mergeArm, withoutReadOnly } from "./merge";
import { NrpOperationLocks } from "./nrpOperations";
import { Operations, type Operation } from "./operations";
import type { Settings } from "./options";
import type { Random } from "./random";
import {
  capacityOf,
  INSTANCE_READ_ONLY,
  instanceNicConfigs,
  ipConfigurations,
  latestModelApplied,
  modelNicConfigs,
  newInstance,
  profileWithoutNetwork,
  references,
  renderInstance,
  renderScaleSet,
  SCALE_SET_IMMUTABLE,
  SCALE_SET_READ_ONLY,
  upgradePolicyOf,
} from "./scaleSets";
import type { ApplicationGatewaySeed, LoadBalancerSeed, SeedTarget, VirtualNetworkSeed } from "./seed";
import { writeNetworkAs } from "./networkControl";
import { seedAppGateway, seedLoadBalancer } from "./networkSeeds";
import { SimState, type InstanceRecord, type ScaleSetRecord } from "./state";
import { writeNicAs } from "./nicWrites";
import { poolReferenceError } from "./poolRefChecks";
import { POOL_REFERENCE_FIELDS } from "./poolReferenceIds";
import {
  addStandaloneVm,
  flexModelError,
  flexVmFollowsModel,
  isFlexible,
  reconcileFlexCapacity,
  removeVm,
  rollFlexVm,
  settleFlexVms,
  vmsOfScaleSet,
} from "./vms";

const OP_VMSS_WRITE = "Microsoft.Compute/virtualMachineScaleSets/write";
const OP_VMSS_DELETE = "Microsoft.Compute/virtualMachineScaleSets/delete";
const OP_VM_WRITE = "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/write";
const OP_VM_DELETE = "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/delete";
const OP_MANUAL_UPGRADE = "Microsoft.Compute/virtualMachineScaleSets/manualUpgrade/action";
/** The delay of CRP's internal scale set ETag bump is not documented: seconds, drawn from this range by default. */
const BUMP_DELAY_MS = { min: 1000, max: 5000 };

/** What a running operation does, for the conflicts between a scale set's operations. */
type OperationKind = "scaleSet" | "instanceWrite" | "instanceDelete";

/** A write request's preconditions and who sent it. */
export interface WriteContext {
  writer: Writer;
  /** The resource ID as the request spelled it (events carry it that way). */
  resourceUri: string;
  ifMatch?: string;
  ifNoneMatch?: string;
}

/** The outcome of a write, for the HTTP layer to answer. */
export interface WriteOutcome {
  status: number;
  body?: JsonObject;
  etag?: string;
  operation: Operation;
  /** 0 for a write that changed nothing (CRP charges it 0: `x-ms-request-charge: 0`). */
  charge: number;
  /** A delete also answers `Location`. */
  withLocation?: boolean;
}

export class Engine implements SeedTarget {
  readonly state = new SimState();
  readonly operations: Operations;
  /** Network RP's one operation at a time per resource: NICs, load balancers (their pools' writes hold them) and
   *  application gateways. */
  readonly nrpLocks: NrpOperationLocks;
  readonly events: EventGridEvent[] = [];
  private readonly listeners = new Set<(e: EventGridEvent) => void>();

  constructor(
    readonly settings: Settings,
    readonly clock: SimClock,
    private readonly random: Random,
  ) {
    this.operations = new Operations(clock);
    this.nrpLocks = new NrpOperationLocks(this.operations);
  }

  // ---- events -------------------------------------------------------------------------------------------------

  onEvent(listener: (e: EventGridEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The event ARM publishes when an operation a request started ends (`kind` names the type family). */
  emit(
    kind: "Write" | "Delete" | "Action",
    outcome: EventOutcome,
    resourceUri: string,
    operationName: string,
    writer: Writer,
    created = false,
  ): void {
    const subscriptionId = resourceUri.split("/")[2] ?? "";
    const e = armEvent({
      eventType: `Microsoft.Resources.Resource${kind}${outcome}`,
      created,
      resourceUri,
      subscriptionId,
      tenantId: this.settings.tenantId,
      operationName,
      writer,
      time: this.clock.nowIso(),
    });
    this.events.push(e);
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        // a failing listener must not break the simulated RP
      }
    }
  }

  /** A writer that is not an HTTP caller: the control API ("another writer"). */
  syntheticWriter(resourceId: string, clientRequestId?: string): Writer {
    return {
      clientRequestId: clientRequestId ?? randomUUID(),
      correlationId: randomUUID(),
      claims: { ...this.settings.otherWriterClaims },
      method: "PUT",
      url: `https://management.azure.com${resourceId}?api-version=2026-03-01`,
      clientIpAddress: "10.0.0.2",
    };
  }

  // ---- seeding ------------------------------------------------------------------------------------------------

  addResourceGroup(subscriptionId: string, name: string, location: string): void {
    let sub = this.state.subscription(subscriptionId);
    if (!sub) {
      sub = { id: subscriptionId, resourceGroups: new Map() };
      this.state.subscriptions.set(subscriptionId.toLowerCase(), sub);
    }
    if (!sub.resourceGroups.has(name.toLowerCase())) {
      sub.resourceGroups.set(name.toLowerCase(), { id: resourceGroupId(sub.id, name), name, location });
    }
  }

  addVirtualNetwork(subscriptionId: string, resourceGroup: string, v: VirtualNetworkSeed): void {
    const rg = this.requireResourceGroup(subscriptionId, resourceGroup);
    const id = virtualNetworkId(this.requireSubscription(subscriptionId).id, rg.name, v.name);
    this.state.virtualNetworks.set(canonical(id), {
      id,
      name: v.name,
      location: rg.location,
      addressPrefixes: v.addressPrefixes ?? ["10.0.0.0/16"],
      etag: `W/"${randomUUID()}"`,
      resourceGuid: randomUUID(),
      subnets: v.subnets.map((s, i) => ({
        id: `${id}/subnets/${s.name}`,
        name: s.name,
        addressPrefix: s.addressPrefix ?? `10.0.${i}.0/24`,
        etag: `W/"${randomUUID()}"`,
      })),
    });
  }

  addLoadBalancer(subscriptionId: string, resourceGroup: string, l: LoadBalancerSeed): void {
    seedLoadBalancer(this, subscriptionId, resourceGroup, l);
  }

  addApplicationGateway(subscriptionId: string, resourceGroup: string, g: ApplicationGatewaySeed): void {
    seedAppGateway(this, subscriptionId, resourceGroup, g);
  }

  /** A scale set that exists already: ETag "1", its instances built and Succeeded, no operation, no event. */
  addScaleSet(
    subscriptionId: string,
    resourceGroup: string,
    name: string,
    model: JsonObject,
    vmNetworkProfile?: ScaleSetRecord["vmNetworkProfile"],
  ): void {
    const ss = this.newScaleSetRecord(subscriptionId, resourceGroup, name, model);
    if (vmNetworkProfile) ss.vmNetworkProfile = vmNetworkProfile;
    const refErr = this.checkReferences(ss.id, modelNicConfigs(model)) ?? flexModelError(ss.id, model);
    if (refErr) throw new Error(`seed: ${String(getPath(refErr.body, "error", "message"))}`);
    this.state.scaleSets.set(canonical(ss.id), ss);
    for (const inst of this.reconcileCapacity(ss).created) inst.provisioningState = "Succeeded";
    settleFlexVms(this.state, ss);
  }

  /** A standalone VM that exists already, with its NIC resources. */
  addVirtualMachine(
    subscriptionId: string,
    resourceGroup: string,
    name: string,
    nics: { name: string; config: JsonObject; resourceGroup?: string }[],
    networkProfile?: "nicConfigurations" | "nicReferences",
  ): void {
    const rg = this.requireResourceGroup(subscriptionId, resourceGroup);
    addStandaloneVm(
      this,
      this.requireSubscription(subscriptionId).id,
      rg.name,
      rg.location,
      name,
      nics,
      networkProfile,
    );
  }

  private newScaleSetRecord(
    subscriptionId: string,
    resourceGroup: string,
    name: string,
    model: JsonObject,
  ): ScaleSetRecord {
    const rg = this.requireResourceGroup(subscriptionId, resourceGroup);
    const sub = this.requireSubscription(subscriptionId).id;
    const location = typeof model["location"] === "string" ? model["location"] : rg.location;
    return {
      id: scaleSetId(sub, rg.name, name),
      subscriptionId: sub,
      resourceGroup: rg.name,
      name,
      location,
      body: { ...structuredClone(model), location },
      etag: 1,
      uniqueId: randomUUID(),
      timeCreated: this.clock.nowIso(),
      provisioningState: "Succeeded",
      activeOperations: new Set(),
      instances: new Map(),
      nextInstanceId: 0,
      deleting: false,
      rolloutGeneration: 0,
      rollingUpgrade: false,
    };
  }

  // ---- lookups ------------------------------------------------------------------------------------------------

  requireSubscription(sub: string) {
    const s = this.state.subscription(sub);
    if (!s) throw subscriptionNotFound(sub);
    return s;
  }

  requireResourceGroup(sub: string, rg: string) {
    this.requireSubscription(sub);
    const g = this.state.resourceGroup(sub, rg);
    if (!g) throw resourceGroupNotFound(rg);
    return g;
  }

  findScaleSet(sub: string, rg: string, name: string): ScaleSetRecord | undefined {
    this.requireResourceGroup(sub, rg);
    return this.state.scaleSet(`/subscriptions/${sub}/resourceGroups/${rg}/providers/${VMSS_TYPE}/${name}`);
  }

  requireScaleSet(sub: string, rg: string, name: string): ScaleSetRecord {
    const ss = this.findScaleSet(sub, rg, name);
    if (!ss) throw resourceNotFound(VMSS_TYPE, name, rg);
    return ss;
  }

  requireInstance(ss: ScaleSetRecord, instanceId: string): InstanceRecord {
    const inst = ss.instances.get(instanceId.toLowerCase());
    if (!inst) throw resourceNotFound(`${VMSS_TYPE}/virtualMachines`, `${ss.name}/${instanceId}`, ss.resourceGroup);
    return inst;
  }

  /** A scale set or instance by ID (any casing). */
  resolve(id: string): { ss: ScaleSetRecord; inst?: InstanceRecord } | undefined {
    const key = canonical(id);
    const m = /^(.*\/virtualmachinescalesets\/[^/]+)(?:\/virtualmachines\/([^/]+))?$/.exec(key);
    if (!m || m[1] === undefined) return undefined;
    const ss = this.state.scaleSets.get(m[1]);
    if (!ss) return undefined;
    if (m[2] === undefined) return { ss };
    const inst = ss.instances.get(m[2]);
    return inst ? { ss, inst } : undefined;
  }

  // ---- checks -------------------------------------------------------------------------------------------------

  /** The operation in progress on this very resource (scale set or instance), if any. */
  private runningOn(ss: ScaleSetRecord, resourceId: string): Operation | undefined {
    for (const id of ss.activeOperations) {
      const op = this.operations.get(id);
      if (op?.status === "InProgress" && canonical(op.resourceId) === canonical(resourceId)) return op;
    }
    return undefined;
  }

  private instanceOperationRuns(ss: ScaleSetRecord, instanceId: string): boolean {
    return this.runningOn(ss, instanceId) !== undefined;
  }

  /**
   * If-Match / If-None-Match as CRP applies them. `current` is the quoted ETag, undefined when the resource is absent.
   */
  checkPreconditions(current: string | undefined, ctx: WriteContext): void {
    if (ctx.ifNoneMatch !== undefined) {
      if (ctx.ifNoneMatch.trim() !== "*")
        throw badRequest("InvalidParameter", "If-None-Match only supports the value '*'.");
      if (current !== undefined)
        throw armError(
          412,
          "PreconditionFailed",
          `If-None-Match: * was given but the resource exists with etag ${current}.`,
        );
    }
    if (ctx.ifMatch !== undefined) {
      const wanted = ctx.ifMatch.split(",").map(crpEtagValue);
      if (current === undefined)
        throw armError(
          412,
          "PreconditionFailed",
          `Etag provided in if-match header ${wanted.join(", ")} does not match: the resource does not exist.`,
        );
      if (!wanted.includes("*") && !wanted.includes(current)) throw preconditionFailed(wanted.join(", "), current);
    }
  }

  /** What each running operation of a scale set is, for the conflicts beyond one resource. */
  private readonly operationKinds = new WeakMap<Operation, OperationKind>();

  private track(op: Operation, kind: OperationKind): Operation {
    this.operationKinds.set(op, kind);
    return op;
  }

  /**
   * Conflicts beyond one resource (`conflictAcrossScaleSet`): instance deletes of one scale set exclude each other
   * (kubernetes/autoscaler PR 3284), and a scale-set-level operation (model write, scale, manualUpgrade, instance
   * delete) and instance writes exclude each other, whichever came first.
   */
  private checkScaleSetConflict(ss: ScaleSetRecord, kind: OperationKind): void {
    if (!this.settings.conflictAcrossScaleSet) return;
    for (const id of ss.activeOperations) {
      const op = this.operations.get(id);
      const running = op && this.operationKinds.get(op);
      if (op?.status !== "InProgress" || running === undefined) continue;
      const clash =
        kind === "instanceWrite"
          ? running !== "instanceWrite"
          : kind === "instanceDelete"
            ? true
            : running === "instanceWrite" || running === "instanceDelete";
      if (clash) throw concurrentRequest();
    }
  }

  /** A write to a resource while an operation runs on it: 409, or (a setting) the running one is preempted. */
  private checkConflict(ss: ScaleSetRecord, resourceId: string): void {
    if (ss.deleting) throw concurrentRequest();
    const running = this.runningOn(ss, resourceId);
    if (!running) return;
    if (this.settings.preemptRunningOperation) this.operations.end(running, "Canceled", { ...OPERATION_PREEMPTED });
    else if (this.settings.conflictWhileOperationInProgress) throw concurrentRequest();
  }

  /** Every subnet and backend pool a NIC list references must exist: else 400, as NRP answers. */
  private checkReferences(byId: string, nics: ReturnType<typeof modelNicConfigs>): ArmError | undefined {
    const refs = references(nics);
    const subnet = refs.subnets.find((s) => !this.state.subnet(s));
    if (subnet) return invalidReference(subnet, byId);
    const pool = refs.pools.find((p) => !this.state.pool(p));
    if (pool) return invalidReference(pool, byId);
    return poolReferenceError(
      this.state,
      ipConfigurations(nics).map(({ nic, name, ipc }) => ({
        ipc,
        id: `${byId}/networkInterfaces/${nic}/ipConfigurations/${name}`,
      })),
      byId,
      POOL_REFERENCE_FIELDS,
    );
  }

  // ---- scale set writes ---------------------------------------------------------------------------------------

  /** PUT (create or update) and PATCH (update) of a scale set. */
  writeScaleSet(
    sub: string,
    rg: string,
    name: string,
    body: JsonObject,
    method: "PUT" | "PATCH",
    ctx: WriteContext,
  ): WriteOutcome {
    const existing = this.findScaleSet(sub, rg, name);
    if (!existing && method === "PATCH") throw resourceNotFound(VMSS_TYPE, name, rg);
    this.checkPreconditions(existing ? `"${existing.etag}"` : undefined, ctx);
    const incoming = withoutReadOnly(body, SCALE_SET_READ_ONLY);
    validateCapacity(incoming);
    const location = incoming["location"];
    if (method === "PUT" && typeof location !== "string") throw locationRequired();
    if (!existing) return this.createScaleSet(sub, rg, name, incoming, ctx);
    if (typeof location === "string" && normalLocation(location) !== normalLocation(existing.location))
      throw locationChanged(VMSS_TYPE, existing.name, existing.location, location, existing.resourceGroup);
    if (existing.deleting) throw markedForDeletion("Update Virtual Machine Scale Set", existing.name);
    this.checkConflict(existing, existing.id);
    this.checkScaleSetConflict(existing, "scaleSet");
    const model = mergeArm(existing.body, withoutReadOnly(incoming, SCALE_SET_IMMUTABLE));
    const refErr = this.checkReferences(existing.id, modelNicConfigs(model)) ?? flexModelError(existing.id, model);
    if (refErr) throw refErr;
    const { changed, op } = this.commitScaleSet(existing, model, ctx.writer, ctx.resourceUri);
    return {
      status: 200,
      body: renderScaleSet(existing),
      etag: `"${existing.etag}"`,
      operation: op,
      charge: changed ? 1 : 0,
    };
  }

  private createScaleSet(sub: string, rg: string, name: string, incoming: JsonObject, ctx: WriteContext): WriteOutcome {
    if (typeof incoming["location"] !== "string") throw locationRequired();
    const ss = this.newScaleSetRecord(sub, rg, name, incoming);
    const refErr = this.checkReferences(ss.id, modelNicConfigs(ss.body)) ?? flexModelError(ss.id, ss.body);
    if (refErr) throw refErr;
    this.state.scaleSets.set(canonical(ss.id), ss);
    ss.provisioningState = "Creating";
    const { created } = this.reconcileCapacity(ss);
    const op = this.startScaleSetOperation(
      ss,
      ctx.writer,
      ctx.resourceUri,
      this.settings.scaleSetWriteMs,
      created,
      [],
      true,
    );
    return { status: 201, body: renderScaleSet(ss), etag: `"${ss.etag}"`, operation: op, charge: 1 };
  }

  /** Replaces the model; bumps the ETag and scales only if something changed. */
  commitScaleSet(
    ss: ScaleSetRecord,
    model: JsonObject,
    writer: Writer,
    resourceUri: string,
    durationMs = this.settings.scaleSetWriteMs,
  ): { changed: boolean; op: Operation } {
    const changed = !deepEqual(model, ss.body);
    let created: InstanceRecord[] = [];
    let removed: InstanceRecord[] = [];
    if (changed) {
      const profileBefore = getPath(ss.body, "properties", "virtualMachineProfile");
      ss.body = model;
      ss.etag++;
      ss.provisioningState = "Updating";
      ({ created, removed } = this.reconcileCapacity(ss));
      if (!deepEqual(profileBefore, getPath(model, "properties", "virtualMachineProfile"))) this.scheduleRollout(ss);
    }
    // A write that changes nothing still runs an operation (recorded: 200, the same ETag, charge 0, "Updating"):
    // its 409 window is real.
    ss.provisioningState = "Updating";
    const op = this.startScaleSetOperation(ss, writer, resourceUri, durationMs, created, removed);
    return { changed, op };
  }

  /**
   * upgradePolicy Automatic or Rolling: CRP brings the instances to the new model itself, all at once shortly after
   * (Automatic) or in batches of maxBatchInstancePercent (Rolling). Instance ETags move; no event announces it (no
   * request was sent to ARM). Manual: nothing happens to the instances.
   */
  private scheduleRollout(ss: ScaleSetRecord): void {
    const policy = upgradePolicyOf(ss.body);
    if (policy.mode === "manual") return;
    const flexible = isFlexible(ss.body);
    // Whether CRP rolls a network change to Flexible VMs is not public: a setting.
    if (flexible && !this.settings.flexibleUpgradeRollsNetwork) return;
    const generation = ++ss.rolloutGeneration;
    if (policy.mode === "rolling") ss.rollingUpgrade = true;
    const step = (): void => {
      if (this.state.scaleSets.get(canonical(ss.id)) !== ss || ss.deleting || generation !== ss.rolloutGeneration)
        return;
      const members: { behind: boolean; apply: () => void }[] = flexible
        ? vmsOfScaleSet(this.state, ss.id)
            .filter((vm) => !vm.deleting)
            .map((vm) => ({ behind: !flexVmFollowsModel(ss, vm), apply: () => void rollFlexVm(ss, vm, this.state) }))
        : [...ss.instances.values()]
            .filter((i) => !i.deleting)
            .sort((a, b) => Number(a.instanceId) - Number(b.instanceId))
            .map((inst) => ({ behind: !latestModelApplied(ss, inst), apply: () => void this.applyModel(ss, inst) }));
      const behind = members.filter((m) => m.behind);
      const live = members.length;
      const batchSize =
        policy.mode === "automatic"
          ? behind.length
          : Math.max(1, Math.ceil((live * policy.maxBatchInstancePercent) / 100));
      for (const m of behind.slice(0, batchSize)) m.apply();
      if (behind.length > batchSize) this.clock.after(this.settings.upgradeStepMs, step);
      else ss.rollingUpgrade = false;
    };
    this.clock.after(this.settings.upgradeStepMs, step);
  }

  /** The instance takes the scale set's current model (its NICs and the rest of the profile). True if it changed. */
  private applyModel(ss: ScaleSetRecord, inst: InstanceRecord): boolean {
    const body = mergeArm(inst.body, {
      properties: {
        networkProfileConfiguration: { networkInterfaceConfigurations: structuredClone(modelNicConfigs(ss.body)) },
      },
    });
    const snapshot = profileWithoutNetwork(ss.body);
    if (deepEqual(body, inst.body) && deepEqual(snapshot, inst.profileSnapshot)) return false;
    inst.body = body;
    inst.profileSnapshot = snapshot;
    inst.etag++;
    return true;
  }

  /** Scale out builds instances from the model as it is now; scale in removes the highest instance IDs. */
  private reconcileCapacity(ss: ScaleSetRecord): { created: InstanceRecord[]; removed: InstanceRecord[] } {
    // A Flexible scale set's VMs are top-level VMs with NIC resources, not instances.
    if (isFlexible(ss.body)) {
      reconcileFlexCapacity(this, ss);
      return { created: [], removed: [] };
    }
    const live = [...ss.instances.values()]
      .filter((i) => !i.deleting)
      .sort((a, b) => Number(a.instanceId) - Number(b.instanceId));
    const target = capacityOf(ss.body);
    const created: InstanceRecord[] = [];
    const removed: InstanceRecord[] = [];
    for (let n = live.length; n < target; n++) {
      const inst = newInstance(ss, this.nextInstanceId(ss), this.clock.nowIso());
      ss.instances.set(inst.instanceId, inst);
      created.push(inst);
    }
    for (const inst of live.slice(target).reverse()) {
      inst.deleting = true;
      inst.provisioningState = "Deleting";
      removed.push(inst);
    }
    return { created, removed };
  }

  /**
   * Azure reuses instance IDs once their instances are deleted ("there is no guarantee on the way instance IDs are
   * assigned"): by default the lowest ID no instance holds (one still being deleted holds its own); else always new.
   */
  private nextInstanceId(ss: ScaleSetRecord): number {
    if (!this.settings.reuseInstanceIds) return ss.nextInstanceId++;
    let id = 0;
    while (ss.instances.has(String(id))) id++;
    ss.nextInstanceId = Math.max(ss.nextInstanceId, id + 1);
    return id;
  }

  private startScaleSetOperation(
    ss: ScaleSetRecord,
    writer: Writer,
    resourceUri: string,
    durationMs: number,
    created: InstanceRecord[],
    removed: InstanceRecord[],
    isCreate = false,
  ): Operation {
    const op = this.operations.start(
      { subscriptionId: ss.subscriptionId, location: ss.location, resourceId: ss.id, durationMs },
      (done) => {
        ss.activeOperations.delete(done.id);
        const ok = done.status === "Succeeded";
        // A Uniform instance keeps ETag "1" once its create ended (recorded: the VMSS VM LIST after the scale set's
        // create answered instance 0 Succeeded at "1"); only top-level VMs move (vms.ts).
        for (const i of created)
          if (i.provisioningState === "Creating") i.provisioningState = ok ? "Succeeded" : "Failed";
        for (const i of removed) ss.instances.delete(i.instanceId);
        if (ss.activeOperations.size === 0 && !ss.deleting)
          ss.provisioningState = ok || done.status === "Canceled" ? "Succeeded" : "Failed";
        this.emit("Write", outcomeOf(done), resourceUri, OP_VMSS_WRITE, writer, isCreate);
      },
    );
    ss.activeOperations.add(this.track(op, "scaleSet").id);
    return op;
  }

  deleteScaleSet(sub: string, rg: string, name: string, ctx: WriteContext): WriteOutcome | undefined {
    const ss = this.findScaleSet(sub, rg, name);
    if (!ss) return undefined; // ARM: deleting what is not there answers 204
    this.checkPreconditions(`"${ss.etag}"`, ctx);
    if (ss.deleting) throw concurrentRequest();
    return this.startDelete(ss, ctx.writer, ctx.resourceUri);
  }

  /** Deletes a scale set as another writer: refused, as the API's delete is, while it is being deleted. */
  deleteAs(ss: ScaleSetRecord, writer: Writer): WriteOutcome {
    if (ss.deleting) throw concurrentRequest();
    return this.startDelete(ss, writer, ss.id);
  }

  startDelete(ss: ScaleSetRecord, writer: Writer, resourceUri: string): WriteOutcome {
    ss.deleting = true;
    ss.provisioningState = "Deleting";
    for (const i of ss.instances.values()) i.provisioningState = "Deleting";
    const op = this.operations.start(
      {
        subscriptionId: ss.subscriptionId,
        location: ss.location,
        resourceId: ss.id,
        durationMs: this.settings.operationDurationMs,
      },
      (done) => {
        ss.activeOperations.delete(done.id);
        if (done.status === "Succeeded") {
          if (this.state.scaleSets.get(canonical(ss.id)) === ss) this.state.scaleSets.delete(canonical(ss.id));
          for (const vm of vmsOfScaleSet(this.state, ss.id)) removeVm(this.state, vm);
          this.emit("Delete", "Success", resourceUri, OP_VMSS_DELETE, writer);
        } else {
          ss.deleting = false;
          ss.provisioningState = "Failed";
          // The instances stay too, and are no longer on their way out: left "Deleting", every client (poolsync, a
          // test's check) would skip them for good while they serve traffic.
          for (const i of ss.instances.values())
            if (!i.deleting && i.provisioningState === "Deleting") i.provisioningState = "Failed";
          this.emit("Delete", outcomeOf(done), resourceUri, OP_VMSS_DELETE, writer);
        }
      },
    );
    ss.activeOperations.add(this.track(op, "scaleSet").id);
    return { status: 202, operation: op, charge: 1, withLocation: true };
  }

  /** POST .../manualUpgrade: bring the listed instances to the latest model. */
  manualUpgrade(ss: ScaleSetRecord, instanceIds: string[], ctx: WriteContext): WriteOutcome {
    if (ss.deleting) throw markedForDeletion("Manual Upgrade Virtual Machine Scale Set VMs", ss.name);
    this.checkConflict(ss, ss.id);
    this.checkScaleSetConflict(ss, "scaleSet");
    const targets = instanceIds.map((id) => this.requireInstance(ss, id));
    const touched: InstanceRecord[] = [];
    for (const inst of targets) {
      const before = structuredClone(instanceNicConfigs(inst));
      if (!this.applyModel(ss, inst)) continue;
      inst.memberNics ??= before;
      inst.provisioningState = "Updating";
      touched.push(inst);
    }
    if (touched.length > 0) this.scheduleScaleSetBump(ss);
    const op = this.operations.start(
      {
        subscriptionId: ss.subscriptionId,
        location: ss.location,
        resourceId: ss.id,
        durationMs: this.settings.operationDurationMs,
      },
      (done) => {
        ss.activeOperations.delete(done.id);
        const ok = done.status === "Succeeded";
        for (const i of touched) {
          i.provisioningState = ok ? "Succeeded" : "Failed";
          delete i.memberNics;
        }
        this.emit("Action", outcomeOf(done), ctx.resourceUri, OP_MANUAL_UPGRADE, ctx.writer);
      },
    );
    ss.activeOperations.add(this.track(op, "scaleSet").id);
    return { status: 202, operation: op, charge: 1, withLocation: true };
  }

  // ---- instance writes ----------------------------------------------------------------------------------------

  writeInstance(ss: ScaleSetRecord, instanceId: string, body: JsonObject, ctx: WriteContext): WriteOutcome {
    // A write to an instance that is gone, or on its way out, is refused before its preconditions, as CRP answers it.
    const inst = ss.instances.get(instanceId.toLowerCase());
    if (!inst) throw instanceNotActive(instanceId);
    if (inst.deleting)
      throw this.settings.deletingInstanceWrite === "markedForDeletion409"
        ? instanceMarkedForDeletion(ss.name, inst.instanceId)
        : instanceNotActive(inst.instanceId);
    this.checkPreconditions(`"${inst.etag}"`, ctx);
    // CRP takes an instance PUT without location (recorded: `{"tags": …}` alone answered 200).
    const location = body["location"];
    if (typeof location === "string" && normalLocation(location) !== normalLocation(ss.location))
      throw locationChanged(
        `${VMSS_TYPE}/virtualMachines`,
        `${ss.name}/${inst.instanceId}`,
        ss.location,
        location,
        ss.resourceGroup,
      );
    if (ss.rollingUpgrade) throw rollingUpgradeInProgress(ss.name, inst.instanceId);
    this.checkConflict(ss, inst.id);
    this.checkScaleSetConflict(ss, "instanceWrite");
    const next = mergeArm(inst.body, withoutReadOnly(body, INSTANCE_READ_ONLY));
    const refErr = this.checkReferences(inst.id, instanceNicConfigs({ ...inst, body: next }));
    if (refErr) throw refErr;
    const { changed, op } = this.commitInstance(ss, inst, next, ctx.writer, ctx.resourceUri);
    return {
      status: this.settings.instanceWriteStatus,
      body: renderInstance(ss, inst),
      etag: `"${inst.etag}"`,
      operation: op,
      charge: changed ? 1 : 0,
    };
  }

  /** Replaces the instance's model; a change bumps its ETag now and the scale set's shortly after. */
  commitInstance(
    ss: ScaleSetRecord,
    inst: InstanceRecord,
    body: JsonObject,
    writer: Writer,
    resourceUri: string,
    durationMs = this.settings.instanceWriteMs,
  ): { changed: boolean; op: Operation } {
    const changed = !deepEqual(body, inst.body);
    if (changed) {
      inst.memberNics ??= structuredClone(instanceNicConfigs(inst));
      inst.body = body;
      inst.etag++;
      this.scheduleScaleSetBump(ss);
    }
    // As recorded, a write that changes nothing (e.g. tags only, which an instance drops) runs an operation too.
    if (!inst.deleting) inst.provisioningState = "Updating";
    const op = this.operations.start(
      { subscriptionId: ss.subscriptionId, location: ss.location, resourceId: inst.id, durationMs },
      (done) => {
        ss.activeOperations.delete(done.id);
        const failed = done.status === "Failed";
        if (!inst.deleting) inst.provisioningState = failed ? "Failed" : "Succeeded";
        if (!this.instanceOperationRuns(ss, inst.id)) delete inst.memberNics;
        this.emit("Write", outcomeOf(done), resourceUri, OP_VM_WRITE, writer);
      },
    );
    ss.activeOperations.add(this.track(op, "instanceWrite").id);
    return { changed, op };
  }

  /**
   * CRP's internal operation after an instance write (cloud-provider-azure issue 9728): the scale set's ETag moves too,
   * seconds later. It is no request to ARM, so no event announces it (Event Grid publishes only what was sent to
   * management.azure.com).
   */
  private scheduleScaleSetBump(ss: ScaleSetRecord): void {
    const delay =
      this.settings.instanceWritePropagatesToScaleSetAfterMs ??
      BUMP_DELAY_MS.min + Math.floor(this.random() * (BUMP_DELAY_MS.max - BUMP_DELAY_MS.min + 1));
    this.clock.after(delay, () => {
      if (this.state.scaleSets.get(canonical(ss.id)) !== ss || ss.deleting) return;
      ss.etag++;
    });
  }

  deleteInstance(ss: ScaleSetRecord, instanceId: string, ctx: WriteContext): WriteOutcome {
    const inst = this.requireInstance(ss, instanceId);
    this.checkPreconditions(`"${inst.etag}"`, ctx);
    this.checkConflict(ss, inst.id);
    this.checkScaleSetConflict(ss, "instanceDelete");
    inst.deleting = true;
    inst.provisioningState = "Deleting";
    // Deleting an instance lowers the scale set's capacity: a model change.
    const sku = getPath(ss.body, "sku");
    if (isJsonObject(sku)) {
      ss.body = mergeArm(ss.body, { sku: { capacity: Math.max(0, capacityOf(ss.body) - 1) } });
      ss.etag++;
    }
    const op = this.operations.start(
      {
        subscriptionId: ss.subscriptionId,
        location: ss.location,
        resourceId: inst.id,
        durationMs: this.settings.operationDurationMs,
      },
      (done) => {
        ss.activeOperations.delete(done.id);
        if (done.status === "Succeeded") ss.instances.delete(inst.instanceId);
        else {
          // A delete that failed leaves the VM in place, Failed, and no longer marked for deletion (as the scale set's
          // own failed delete does): kept marked, every later PUT on it would be refused as "marked for deletion"
          // for good, while its state said otherwise after any write.
          inst.deleting = false;
          inst.provisioningState = "Failed";
        }
        this.emit("Delete", outcomeOf(done), ctx.resourceUri, OP_VM_DELETE, ctx.writer);
      },
    );
    ss.activeOperations.add(this.track(op, "instanceDelete").id);
    return { status: 202, operation: op, charge: 1, withLocation: true };
  }

  // ---- another writer (control API) ---------------------------------------------------------------------------

  /** Applies `mutate` to the rendered resource (scale set or instance) and commits it as another writer would, under
   *  the rules the app's writes meet: refused (the ArmError the API would answer) while the resource is being deleted
   *  or an operation runs that excludes it, or the running one preempted when set so.
   *  `durationMs` 0: its operation has ended by the time anything else happens (a write that came and finished). */
  writeAs(id: string, mutate: (r: JsonObject) => void, clientRequestId?: string, durationMs?: number): JsonObject {
    const network = writeNetworkAs(this, id, mutate, clientRequestId, durationMs);
    if (network) return network;
    const nic = this.state.nics.get(canonical(id));
    if (nic) return writeNicAs(this, nic, mutate, clientRequestId);
    const found = this.resolve(id);
    if (!found) throw new Error(`no scale set or instance ${id}`);
    const { ss, inst } = found;
    if (inst) {
      if (inst.deleting)
        throw this.settings.deletingInstanceWrite === "markedForDeletion409"
          ? instanceMarkedForDeletion(ss.name, inst.instanceId)
          : instanceNotActive(inst.instanceId);
      if (ss.rollingUpgrade) throw rollingUpgradeInProgress(ss.name, inst.instanceId);
      this.checkConflict(ss, inst.id);
      this.checkScaleSetConflict(ss, "instanceWrite");
      const draft = renderInstance(ss, inst);
      mutate(draft);
      this.commitInstance(
        ss,
        inst,
        withoutReadOnly(draft, INSTANCE_READ_ONLY),
        this.syntheticWriter(inst.id, clientRequestId),
        inst.id,
        durationMs,
      );
      return renderInstance(ss, inst);
    }
    if (ss.deleting) throw markedForDeletion("Update Virtual Machine Scale Set", ss.name);
    this.checkConflict(ss, ss.id);
    this.checkScaleSetConflict(ss, "scaleSet");
    const draft = renderScaleSet(ss);
    mutate(draft);
    const model = { ...withoutReadOnly(draft, SCALE_SET_READ_ONLY), location: ss.location };
    validateCapacity(model);
    this.commitScaleSet(ss, model, this.syntheticWriter(ss.id, clientRequestId), ss.id, durationMs);
    return renderScaleSet(ss);
  }

  reset(): void {
    this.state.clear();
    this.operations.clear();
    this.nrpLocks.clear();
    this.events.length = 0;
  }
}

function outcomeOf(op: Operation): EventOutcome {
  return op.status === "Succeeded" ? "Success" : op.status === "Canceled" ? "Cancel" : "Failure";
}

/** "East US 2" and "eastus2" name the same region. */
function normalLocation(l: string): string {
  return l.replace(/\s+/g, "").toLowerCase();
}

function validateCapacity(model: JsonObject): void {
  const c = getPath(model, "sku", "capacity");
  if (c !== undefined && (typeof c !== "number" || !Number.isInteger(c) || c < 0))
    throw badRequest("InvalidParameter", `The value ${JSON.stringify(c)} of parameter 'sku.capacity' is invalid.`);
}
