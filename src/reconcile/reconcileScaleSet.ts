import type { Config } from "../config";
import { toIntent, type Outcome, type StoredDeclaration } from "../core/declarations";
import {
  BeingDeletedError,
  ConflictError,
  describeError,
  NotFoundError,
  PreconditionFailedError,
  ThrottledError,
  TransientError,
} from "../core/errors";
import { isDeleting, type InstanceModel, type ScaleSetModel } from "../core/models";
import { applyIntents, intentSatisfied, type PoolIntent } from "../core/networkProfile";
import type { CachedEntry, CachedPartition, Clock, ComputePort, DeclarationStore, Logger, ModelCache } from "../core/ports";
import { instanceRef, parseBackendPoolId, type InstanceRef, type ScaleSetRef } from "../core/resourceIds";
import { mapLimit, preconditionBackoffMs, requeueBackoffMs } from "../core/retryPolicy";
import { inScopes } from "../core/scopes";
import { bindingAllows, bindingRefusal } from "./bindingGate";
import { MAX_DECLARATIONS_PER_SCALE_SET, overCap } from "./declarationCap";
import { isolateFailures } from "./isolateFailures";
import { CallStats } from "./callStats";
import type { WritePacer } from "./writePacer";

/**
 * The one reconcile every trigger ends in (controller-runtime style): the message or event is only a key;
 * this re-reads the declarations and the real state, writes the difference with If-Match, and says when to
 * come back. It never sleeps out a throttle: it answers requeueAfterMs and the queue adapter schedules it.
 */

export interface ReconcileDeps {
  compute: ComputePort;
  declarations: DeclarationStore;
  cache: ModelCache;
  clock: Clock;
  log: Logger;
  config: Pick<Config, "scopes" | "bindings" | "cacheTtlMs" | "maxPreconditionRetries" | "instanceConcurrency" | "maxAttempts" | "failedRetryMs" | "pacingMaxWaitMs">;
  pacer: WritePacer;
  newRequestId: () => string;
  random?: () => number;
}

export type ReconcileResult =
  | "applied"
  | "unchanged"
  | "no-declarations"
  | "refused"
  | "target-deleted"
  | "target-deleting"
  | "requeued"
  | "failed";

export interface ReconcileReport {
  scaleSetId: string;
  trigger: string;
  result: ReconcileResult;
  declarations: number;
  armReads: number;
  armWrites: number;
  preconditionFailures: number;
  throttles: number;
  instancesWritten: number;
  durationMs: number;
  requeueAfterMs?: number;
  reason?: string;
}

export interface ReconcileTrigger {
  reason: string;
  /** 0 for a fresh request; n for the n-th re-enqueued attempt. */
  attempt: number;
  /** Read the model and the instances from ARM even where the cache has fresh rows. */
  fresh?: boolean;
}

/** What one reconcile does for every request that joined it: all their reasons, the most careful reading. */
export function mergeTriggers(a: ReconcileTrigger, b: ReconcileTrigger): ReconcileTrigger {
  const reason = a.reason === b.reason ? a.reason : `${a.reason}; ${b.reason}`;
  return { reason: reason.slice(0, 512), attempt: Math.max(a.attempt, b.attempt), ...(a.fresh || b.fresh ? { fresh: true } : {}) };
}

/** Thrown inside a reconcile to leave it and come back later; never escapes reconcileScaleSet. */
class Requeue extends Error {
  constructor(readonly delayMs: number, readonly why: string) {
    super(why);
  }
}

function usable<M>(entry: CachedEntry<M> | undefined, now: number, ttlMs: number): entry is CachedEntry<M> & { model: M } {
  return entry !== undefined && entry.model !== undefined && !entry.stale && now - entry.readAt < ttlMs;
}

export async function reconcileScaleSet(ref: ScaleSetRef, trigger: ReconcileTrigger, deps: ReconcileDeps): Promise<ReconcileReport> {
  const started = deps.clock.now();
  const stats = new CallStats();
  const compute = stats.wrap(deps.compute);
  const { cache, config, log } = deps;
  let instancesWritten = 0;

  const report = (result: ReconcileResult, declarations: number, extra: Partial<ReconcileReport> = {}): ReconcileReport => {
    const r: ReconcileReport = {
      scaleSetId: ref.id,
      trigger: trigger.reason,
      result,
      declarations,
      armReads: stats.reads,
      armWrites: stats.writes,
      preconditionFailures: stats.preconditionFailures,
      throttles: stats.throttles,
      instancesWritten,
      durationMs: deps.clock.now() - started,
      ...extra,
    };
    log.info("reconcile", { ...r });
    return r;
  };

  const declarations = await deps.declarations.listForScaleSet(ref);
  if (declarations.length === 0) return report("no-declarations", 0);

  const nowIso = () => new Date(deps.clock.now()).toISOString();
  const record = async (d: StoredDeclaration, outcome: Outcome) => {
    const same =
      d.outcome.kind === outcome.kind &&
      (d.outcome.reason ?? "") === (outcome.reason ?? "") &&
      (d.outcome.appliedEtag ?? "") === (outcome.appliedEtag ?? "") &&
      (d.outcome.appliedEverywhere ?? false) === (outcome.appliedEverywhere ?? false) &&
      // A failure again moves its retry time on (and counts the attempt): else the timer retries it on every run.
      (d.outcome.retryAt ?? "") === (outcome.retryAt ?? "");
    if (!same) await deps.declarations.recordOutcome(ref, d, outcome);
  };
  // Bounded: one Table write per declaration, at most 8 in flight, however large the partition.
  const recordAll = (ds: StoredDeclaration[], outcome: Omit<Outcome, "at">) => mapLimit(ds, 8, (d) => record(d, { ...outcome, at: nowIso() }));

  // Scope first: nothing outside POOLSYNC_SCOPES is ever read or written.
  if (!inScopes(config.scopes, ref.subscriptionId, ref.resourceGroup)) {
    await recordAll(declarations, { kind: "refused", reason: "scale set is outside POOLSYNC_SCOPES" });
    return report("refused", declarations.length, { reason: "scale set outside POOLSYNC_SCOPES" });
  }
  const active: StoredDeclaration[] = [];
  let waiting = 0;
  const over = overCap(declarations);
  for (const d of declarations) {
    if (over.has(d)) {
      await record(d, { kind: "refused", reason: `the scale set has more than ${MAX_DECLARATIONS_PER_SCALE_SET} declarations; this is one of the newest`, at: nowIso() });
      continue;
    }
    // A declaration that failed on its own waits for its retry time: writing it again sooner only fails again.
    if (d.outcome.kind === "failed" && d.outcome.retryAt && Date.parse(d.outcome.retryAt) > deps.clock.now() && ++waiting) continue;
    const pool = parseBackendPoolId(d.backendPoolId);
    if (!pool.ok) await record(d, { kind: "refused", reason: `backendPoolId ${pool.reason}`, at: nowIso() });
    else if (!inScopes(config.scopes, pool.value.subscriptionId, pool.value.resourceGroup)) {
      await record(d, { kind: "refused", reason: "backend pool is outside POOLSYNC_SCOPES", at: nowIso() });
    } else if (!bindingAllows(config.bindings, ref.id, pool.value.id)) {
      // Checked again here, not only at intake: the rules may have narrowed since the declaration was accepted.
      await record(d, { kind: "refused", reason: bindingRefusal(config.bindings, ref.id, pool.value.id), at: nowIso() });
    } else active.push(d);
  }
  if (active.length === 0 && waiting > 0) return report("unchanged", declarations.length, { reason: `${waiting} failed declaration(s) wait for their retry time` });
  if (active.length === 0) return report("refused", declarations.length, { reason: "every pool outside POOLSYNC_SCOPES or POOLSYNC_BINDINGS" });
  const intents = active.map(toIntent);

  try {
    const read = await cache.readPartition(ref);
    // A fresh reconcile still needs the rows' Table ETags (to store what it reads), but none of their models.
    const cached: CachedPartition = trigger.fresh ? forgetModels(read) : read;
    let model = await modelOf(ref, cached, compute, deps);
    if (isDeleting(model.provisioningState)) throw new BeingDeletedError(`${ref.id} is being deleted`);

    // A terminal answer (400, 403) fails only the intents whose own write fails: the rest are written without them.
    const modelWrite = await isolateFailures(intents.length, model, (idx, m) => writeModel(ref, m, idx.map((i) => intents[i]!), compute, deps, trigger));
    model = modelWrite.state;
    const failedWrites = modelWrite.failed;
    const held = intents.map((_, i) => i).filter((i) => !failedWrites.has(i));
    const instances = await instancesOf(ref, cached, model, compute, deps);
    const instanceWrite = await isolateFailures(held.length, { written: 0, instances }, (idx, st) =>
      writeInstances(ref, st.instances, idx.map((i) => intents[held[i]!]!), compute, deps).then((r) => ({ written: st.written + r.written, instances: r.instances })),
    );
    for (const [i, reason] of instanceWrite.failed) failedWrites.set(held[i]!, reason);
    const after = instanceWrite.state;
    instancesWritten = after.written;
    if (instancesWritten > 0 || instanceWrite.failed.size > 0) await cache.markStale(ref, "our instance writes change the scale set's ETag");

    const modelEdit = applyIntents(model.nics, intents);
    const live = after.instances.filter((i) => !isDeleting(i.provisioningState));
    await mapLimit(
      active.map((d, i) => [d, i] as const),
      8,
      ([d, i]) => {
        const placed = modelEdit.outcomes[i];
        const writeFailure = failedWrites.get(i);
        if (writeFailure !== undefined || (placed && !placed.ok)) {
          const reason = writeFailure ?? (placed && !placed.ok ? placed.reason : "");
          return record(d, { kind: "failed", reason, at: nowIso(), retryAt: new Date(deps.clock.now() + config.failedRetryMs).toISOString() });
        }
        const intent = intents[i] as PoolIntent;
        const everywhere = intentSatisfied(model.nics, intent) === true && live.every((inst) => intentSatisfied(inst.nics, intent) !== false);
        return record(d, { kind: "applied", appliedEtag: model.etag, at: nowIso(), ...(d.state === "absent" && everywhere ? { appliedEverywhere: true } : {}) });
      },
    );
    return report(stats.writes > 0 ? "applied" : "unchanged", declarations.length);
  } catch (err) {
    if (err instanceof NotFoundError) {
      await cache.evictScaleSet(ref);
      await recordAll(active, { kind: "target-deleted", reason: err.message });
      return report("target-deleted", declarations.length, { reason: err.message });
    }
    if (err instanceof BeingDeletedError) {
      await recordAll(active, { kind: "target-deleting", reason: err.message });
      return report("target-deleting", declarations.length, { reason: err.message });
    }
    const retry = retryOf(err, trigger);
    if (retry) {
      if (trigger.attempt + 1 > config.maxAttempts) {
        const reason = `gave up after ${trigger.attempt} re-enqueued attempts: ${retry.why}`;
        await recordAll(active, { kind: "failed", reason, retryAt: new Date(deps.clock.now() + config.failedRetryMs).toISOString() });
        return report("failed", declarations.length, { reason });
      }
      return report("requeued", declarations.length, { requeueAfterMs: retry.delayMs, reason: retry.why });
    }
    const reason = describeError(err);
    log.error("reconcile.error", { scaleSetId: ref.id, error: reason });
    await recordAll(active, { kind: "failed", reason, retryAt: new Date(deps.clock.now() + config.failedRetryMs).toISOString() });
    return report("failed", declarations.length, { reason });
  }
}

function forgetModels(p: CachedPartition): CachedPartition {
  const blind = <M>(e: CachedEntry<M>): CachedEntry<M> => ({ ...e, model: undefined });
  return { scaleSet: p.scaleSet && blind(p.scaleSet), instances: new Map([...p.instances].map(([id, e]) => [id, blind(e)])) };
}

function retryOf(err: unknown, trigger: ReconcileTrigger): Requeue | undefined {
  if (err instanceof Requeue) return err;
  if (err instanceof ThrottledError) return new Requeue(err.retryAfterMs, `throttled: ${err.message}`);
  if (err instanceof ConflictError) return new Requeue(err.retryAfterMs, `conflict: ${err.message}`);
  if (err instanceof TransientError) return new Requeue(Math.max(err.retryAfterMs, requeueBackoffMs(trigger.attempt + 1)), `transient: ${err.message}`);
  return undefined;
}

/**
 * Waits for the write budget (briefly), or leaves the reconcile to come back when it is there: a write that
 * would only earn a 429 is never sent.
 */
async function pace(target: ScaleSetRef | InstanceRef, deps: ReconcileDeps): Promise<void> {
  for (;;) {
    const wait = deps.pacer.waitMs(target);
    if (wait === 0) break;
    if (wait > deps.config.pacingMaxWaitMs) throw new Requeue(wait, `pacing: write budget of ${target.id} is spent for ${Math.ceil(wait / 1000)} s`);
    await deps.clock.sleep(wait);
  }
  deps.pacer.take(target);
}

/** Sends the write; on 429 the pacer learns that budget is empty until Retry-After. */
async function learnThrottle<T>(target: ScaleSetRef | InstanceRef, deps: ReconcileDeps, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof ThrottledError) deps.pacer.throttled(target, err.retryAfterMs);
    throw err;
  }
}

/** The scale set model from the cache when it is fresh, else from ARM (and then stored, conditionally). */
async function modelOf(ref: ScaleSetRef, cached: CachedPartition, compute: ComputePort, deps: ReconcileDeps): Promise<ScaleSetModel> {
  if (usable(cached.scaleSet, deps.clock.now(), deps.config.cacheTtlMs)) return cached.scaleSet.model;
  const model = await compute.getScaleSet(ref);
  await deps.cache.storeScaleSet(ref, model, cached.scaleSet?.rowEtag);
  return model;
}

/** Writes the model's NICs with If-Match until the edit is empty; a 412 means re-read and recompute. */
async function writeModel(
  ref: ScaleSetRef,
  start: ScaleSetModel,
  intents: PoolIntent[],
  compute: ComputePort,
  deps: ReconcileDeps,
  trigger: ReconcileTrigger,
): Promise<ScaleSetModel> {
  let model = start;
  for (let attempt = 0; ; attempt++) {
    const edit = applyIntents(model.nics, intents);
    if (!edit.nics) return model;
    const clientRequestId = deps.newRequestId();
    const pools = intents.filter((i) => intentSatisfied(model.nics, i) === false).map((i) => `${i.state}:${i.backendPoolId}`);
    await pace(ref, deps);
    // An invalidation after this point (someone else's write) makes the store of our answer lose, as it should.
    const base = await deps.cache.beginWrite(ref, clientRequestId);
    try {
      const after = await learnThrottle(ref, deps, () => compute.writeScaleSetNics(ref, model, edit.nics!, { ifMatch: model.etag, clientRequestId }));
      deps.log.info("arm.write", { scaleSetId: ref.id, target: "model", pools, ifMatch: model.etag, etag: after.etag, clientRequestId, outcome: "ok" });
      await deps.cache.storeScaleSet(ref, after, base, clientRequestId);
      return after;
    } catch (err) {
      deps.log.info("arm.write", { scaleSetId: ref.id, target: "model", pools, ifMatch: model.etag, clientRequestId, outcome: describeError(err) });
      if (!(err instanceof PreconditionFailedError)) throw err;
      if (attempt >= deps.config.maxPreconditionRetries) {
        throw new Requeue(preconditionBackoffMs(attempt, deps.random), `${attempt + 1} precondition failures in a row on ${ref.id} (${trigger.reason})`);
      }
      const base = await deps.cache.markStale(ref, "412 on our write");
      await deps.clock.sleep(preconditionBackoffMs(attempt, deps.random));
      model = await compute.getScaleSet(ref);
      await deps.cache.storeScaleSet(ref, model, base);
    }
  }
}

/**
 * The instances with their own NICs and ETags: from the cache when every row is fresh and they add up to the
 * capacity, else one LIST (never one GET each).
 */
async function instancesOf(ref: ScaleSetRef, cached: CachedPartition, model: ScaleSetModel, compute: ComputePort, deps: ReconcileDeps): Promise<InstanceModel[]> {
  const now = deps.clock.now();
  const entries = [...cached.instances.values()];
  const allFresh = entries.length > 0 && entries.every((e) => usable(e, now, deps.config.cacheTtlMs));
  if (deps.cache.enabled && allFresh && (model.capacity === undefined || entries.length === model.capacity)) {
    return entries.map((e) => e.model as InstanceModel);
  }
  const listed = await compute.listInstances(ref);
  const seen = new Set(listed.map((i) => i.instanceId));
  await mapLimit(listed, 8, (inst) => deps.cache.storeInstance(instanceRef(ref, inst.instanceId), inst, cached.instances.get(inst.instanceId)?.rowEtag).then(() => {}));
  await mapLimit([...cached.instances.keys()].filter((id) => !seen.has(id)), 8, (id) => deps.cache.evictInstance(instanceRef(ref, id)));
  return listed;
}

/** Each instance whose own configuration differs, with its own ETag, a bounded number at a time. */
async function writeInstances(
  ref: ScaleSetRef,
  instances: InstanceModel[],
  intents: PoolIntent[],
  compute: ComputePort,
  deps: ReconcileDeps,
): Promise<{ written: number; instances: InstanceModel[] }> {
  let written = 0;
  // What each instance holds after our writes (or vanished: scaled in under us).
  const current = new Map(instances.map((i) => [i.instanceId, i] as const));
  const targets = instances.filter((i) => !isDeleting(i.provisioningState) && applyIntents(i.nics, intents).nics !== undefined);
  await mapLimit(targets, deps.config.instanceConcurrency, async (first) => {
    const iref = instanceRef(ref, first.instanceId);
    let inst = first;
    for (let attempt = 0; ; attempt++) {
      const edit = applyIntents(inst.nics, intents);
      if (!edit.nics || isDeleting(inst.provisioningState)) return;
      const clientRequestId = deps.newRequestId();
      const pools = intents.filter((i) => intentSatisfied(inst.nics, i) === false).map((i) => `${i.state}:${i.backendPoolId}`);
      await pace(iref, deps);
      const base = await deps.cache.beginWrite(iref, clientRequestId);
      try {
        const after = await learnThrottle(iref, deps, () => compute.writeInstanceNics(iref, inst, edit.nics!, { ifMatch: inst.etag, clientRequestId }));
        deps.log.info("arm.write", { scaleSetId: ref.id, target: `instance ${inst.instanceId}`, pools, ifMatch: inst.etag, etag: after.etag, clientRequestId, outcome: "ok" });
        written++;
        current.set(after.instanceId, after);
        if (after.etag) await deps.cache.storeInstance(iref, after, base, clientRequestId);
        return;
      } catch (err) {
        deps.log.info("arm.write", { scaleSetId: ref.id, target: `instance ${inst.instanceId}`, pools, ifMatch: inst.etag, clientRequestId, outcome: describeError(err) });
        if (err instanceof NotFoundError || err instanceof BeingDeletedError) {
          // Scaled in or being deleted under us: nothing to write, and its row must not linger.
          current.delete(inst.instanceId);
          await deps.cache.evictInstance(iref);
          return;
        }
        if (!(err instanceof PreconditionFailedError)) throw err;
        if (attempt >= deps.config.maxPreconditionRetries) throw new Requeue(preconditionBackoffMs(attempt, deps.random), `${attempt + 1} precondition failures in a row on ${iref.id}`);
        const base = await deps.cache.markStale(iref, "412 on our write");
        await deps.clock.sleep(preconditionBackoffMs(attempt, deps.random));
        try {
          inst = await compute.getInstance(iref);
        } catch (getErr) {
          if (getErr instanceof NotFoundError) {
            current.delete(inst.instanceId);
            await deps.cache.evictInstance(iref);
            return;
          }
          throw getErr;
        }
        current.set(inst.instanceId, inst);
        await deps.cache.storeInstance(iref, inst, base);
      }
    }
  });
  return { written, instances: [...current.values()] };
}
