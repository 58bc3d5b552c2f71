import { finishes, toIntent, type Outcome, type StoredDeclaration } from "../core/declarations";
import { BeingDeletedError, describeError, FatalError, NotFoundError } from "../core/errors";
import { isDeleting, type InstanceModel, type ScaleSetModel } from "../core/models";
import { applyIntents, intentSatisfied, type NicConfiguration, type PoolIntent } from "../core/networkProfile";
import type { CachedEntry, CachedPartition, ComputePort } from "../core/ports";
import { instanceRef, type ScaleSetRef } from "../core/resourceIds";
import { mapLimit } from "../core/retryPolicy";
import { inScopes } from "../core/scopes";
import { crpRollsOutModel, ROLLOUT_RECHECK_MS } from "../core/upgradePolicy";
import { awaitingCrpRollout } from "./crpRollout";
import { activeDeclarations } from "./activeDeclarations";
import { isolateFailures, ISOLATION_WRITES_PER_PASS, type IsolationHooks, type WriteStep } from "./isolateFailures";
import { listAndStoreInstances } from "./listInstances";
import { CallStats } from "./callStats";
import { DriftWatch, vmDriftView } from "./driftWatch";
import { readThroughGroup } from "./groupRead";
import { ifMatchWrite } from "./ifMatchWrite";
import { OutcomeRecorder } from "./recordOutcomes";
import { orchestrationModeOf, vmOutcomes, writeFlexVms } from "./vmMembership";
import { settleStop, type PassStop } from "./passStop";
import { comeBack, nextStep, reportFieldsOf, type ComeBack } from "./passResult";
import {
  doubtHold,
  doubtHoldMs,
  observedSinceOf,
  reporter,
  type ReconcileDeps,
  type ReconcileReport,
  type ReconcileTrigger,
} from "./vocabulary";

/**
 * The one reconcile every trigger ends in (controller-runtime style): the message or event is only a key;
 * this re-reads the declarations and the real state, writes the difference with If-Match, and says when to
 * come back. It never sleeps out a throttle: it answers when to come back (passResult's `nextStep`), and the runner
 * hands that to the queue.
 */

function usable<M>(
  entry: CachedEntry<M> | undefined,
  now: number,
  ttlMs: number,
): entry is CachedEntry<M> & { model: M } {
  return entry !== undefined && entry.model !== undefined && !entry.stale && now - entry.readAt < ttlMs;
}

/**
 * Long: one pass's state (what failed alone, the isolation budget, the instances ARM refused) is shared by its steps
 * in closures, and each step's stop must see all of it; the steps are split out where they need none (writeModel,
 * instancesOf, writeInstances, proveFresh). Splitting further wants a pass object (issue 45, left).
 */
export async function reconcileScaleSet(
  ref: ScaleSetRef,
  trigger: ReconcileTrigger,
  deps: ReconcileDeps,
): Promise<ReconcileReport> {
  const passStartedAt = deps.clock.now();
  const observedSince = observedSinceOf(trigger);
  const stats = new CallStats();
  const compute = stats.wrap(deps.compute);
  const { cache, config } = deps;
  let instancesWritten = 0;
  const report = reporter(ref, trigger, stats, deps, () => instancesWritten);

  const declarations = await deps.declarations.listForTarget(ref);
  if (declarations.length === 0) return report("no-declarations", 0);

  const outcomes = new OutcomeRecorder(ref, deps.declarations, deps.clock);
  const record = (d: StoredDeclaration, outcome: Omit<Outcome, "at">) => outcomes.record(d, outcome);
  const recordAll = (ds: StoredDeclaration[], outcome: Omit<Outcome, "at">) => outcomes.recordAll(ds, outcome);

  // Scope first: nothing outside POOLSYNC_SCOPES is ever read or written.
  if (!inScopes(config.scopes, ref.subscriptionId, ref.resourceGroup)) {
    await recordAll(declarations, { kind: "refused", reason: "scale set is outside POOLSYNC_SCOPES" });
    return report("refused", declarations.length, { reason: "scale set outside POOLSYNC_SCOPES" });
  }
  const { active, waiting } = await activeDeclarations(ref, declarations, outcomes, config, deps.clock.now());
  if (active.length === 0 && waiting > 0)
    return report("unchanged", declarations.length, {
      reason: `${waiting} failed declaration(s) wait for their retry time`,
    });
  if (active.length === 0)
    return report("refused", declarations.length, {
      reason: "every pool outside POOLSYNC_SCOPES or POOLSYNC_BINDINGS",
    });
  const intents = active.map(toIntent);
  const drift = new DriftWatch(ref, active, intents, deps);
  // What this pass learnt, kept if it stops early (an error, or a come-back): a declaration that failed alone is
  // recorded at once (the next attempt skips it), and a later stop of the same pass does not record it again.
  const failedAlone = new Set<StoredDeclaration>();
  const budget = { left: ISOLATION_WRITES_PER_PASS };
  const hooksFor = (toIntentIndex: (i: number) => number): IsolationHooks => ({
    budget,
    onFailed: async (i, reason) => {
      const d = active[toIntentIndex(i)]!;
      failedAlone.add(d);
      await record(d, outcomes.failed(reason, config.failedRetryMs));
    },
  });
  let instanceFailures: { instanceId: string; reason: string }[] = [];
  // A stop that gives up fails every declaration not applied before this pass. A model that holds the pool is not
  // enough: the instances this pass never reached do not (issue 42's slow wide burst left 90 such declarations
  // `pending`, with nothing doing them, until the timer's stuck-pending check).
  const stopped = async (stop: PassStop) => {
    await drift.settle(false);
    const failure = { target: ref, trigger, active, declarations: declarations.length, outcomes, report };
    return settleStop(stop, { ...failure, spare: (d) => failedAlone.has(d) || d.outcome.kind === "applied" }, deps);
  };

  try {
    const read = await cache.readPartition(ref);
    // A fresh reconcile still needs the rows' Table ETags (to store what it reads), but none of their models (a
    // proving one none read before it began).
    const cached: CachedPartition = observedSince !== undefined ? forgetModels(read, observedSince) : read;
    const fromCacheOrArm = await modelOf(ref, cached, compute, deps);
    let model = fromCacheOrArm.model;
    // Whether the model this pass judges by is ARM's word (read or written in this pass, or a row read since the
    // proving pass began), not a cached row.
    let modelObserved = fromCacheOrArm.fromArm || observedSince !== undefined;
    // A model read from ARM and about to be written is not stored as read: the write marks its row before it goes and
    // stores the answer, so the read's store would be overwritten unseen (one Table round trip a pass). Stored as read
    // when nothing is written, or when the write never began.
    const deleting = isDeleting(model.provisioningState);
    const mode = orchestrationModeOf(model);
    const writesModel = !deleting && mode !== undefined && planNics(model.nics, intents) !== undefined;
    const storeRead = () => cache.storeScaleSet(ref, fromCacheOrArm.model, cached.scaleSet?.rowEtag);
    if (fromCacheOrArm.fromArm && !writesModel) await storeRead();
    let modelRowMarked = false;
    if (deleting) throw new BeingDeletedError(`${ref.id} is being deleted`);
    if (!mode) {
      const reason = `orchestrationMode "${model.orchestrationMode ?? ""}" is not one poolsync knows (Uniform, Flexible)`;
      await recordAll(active, { kind: "refused", reason });
      return report("refused", declarations.length, { reason });
    }

    drift.observe([{ kind: "model", ids: [ref.id], nics: model.nics }]);
    // A terminal answer (400, 403) fails only the intents whose own write fails: the rest are written without them.
    const modelWrite = await isolateFailures(
      intents.length,
      model,
      (idx, m) =>
        writeModel(
          ref,
          m,
          idx.map((i) => intents[i]!),
          compute,
          deps,
          trigger,
          () => (modelRowMarked = true),
        ),
      hooksFor((i) => i),
    ).catch(async (err: unknown) => ({ error: err }) as const);
    if ("error" in modelWrite || modelWrite.comeBack) {
      // Stopped before its write began (a pacing wait too long): the next pass finds the read in the cache.
      if (fromCacheOrArm.fromArm && writesModel && !modelRowMarked) await storeRead().catch(() => undefined);
      if ("error" in modelWrite) throw modelWrite.error;
      return await stopped({ comeBack: modelWrite.comeBack! });
    }
    if (modelWrite.state !== model) modelObserved = true;
    model = modelWrite.state;
    const failedWrites = modelWrite.failed;
    const held = intents.map((_, i) => i).filter((i) => !failedWrites.has(i));
    if (mode === "Flexible") {
      // Existing VMs follow their NICs, not the model: each NIC that differs is written with its own ETag.
      const heldIntents = held.map((i) => intents[i]!);
      const vms = await writeFlexVms(ref, model, heldIntents, compute, {
        ...deps,
        network: stats.wrapNetwork(deps.network),
        ...(observedSince !== undefined ? { observedSince } : {}),
      });
      if (vms.comeBack) return await stopped({ comeBack: vms.comeBack });
      instancesWritten = vms.results.reduce((n, v) => n + v.written, 0);
      const each = vmOutcomes(
        held.map((i) => active[i]!),
        heldIntents,
        vms.results,
        model,
        (reason) => outcomes.failed(reason, config.failedRetryMs),
      );
      const observed = modelObserved && vms.results.every((v) => v.observed);
      if (!observed && observedSince === undefined && held.some((i, k) => finishes(active[i]!, each[k]!)))
        return proveFresh(ref, trigger, passStartedAt, deps, drift);
      const doubt = doubtHoldMs(deps, [model, ...vms.results.flatMap((v) => v.resources)]);
      await mapLimit(
        held.map((i, k) => [active[i]!, each[k]!] as const),
        8,
        // A write of ours that may still land on one of these holds back every finish until it cannot.
        ([d, o]) => (doubt > 0 && finishes(d, o) ? Promise.resolve() : record(d, o)),
      );
      drift.observe(vms.results.flatMap(vmDriftView));
      await drift.settle(true);
      const step = nextStep([doubtHold(doubt)], trigger.attempt, config.maxAttempts);
      return report(stats.writes > 0 ? "applied" : "unchanged", declarations.length, reportFieldsOf(step));
    }
    // Automatic/Rolling: CRP brings the instances to the model itself; an instance PUT would only race it.
    const rollsOut = crpRollsOutModel(model.upgradeMode);
    const listedAt = deps.clock.now();
    const { instances, fromArm: instancesObserved } = await instancesOf(
      ref,
      cached,
      model,
      rollsOut ? [] : held.map((i) => intents[i]!),
      compute,
      deps,
    );
    // Instances CRP is still rolling the model out to lag it by design: that is no drift.
    if (!rollsOut)
      drift.observe(
        instances
          .filter((i) => !isDeleting(i.provisioningState))
          .map((i) => ({ kind: "instance", ids: [i.id], nics: i.nics })),
      );
    const instanceWrite = rollsOut
      ? { state: { written: 0, instances }, failed: new Map<number, string>() }
      : await isolateFailures(
          held.length,
          { written: 0, instances },
          (idx, st) =>
            writeInstances(
              ref,
              st.instances,
              idx.map((i) => intents[held[i]!]!),
              compute,
              deps,
              listedAt,
            ).then((r) => {
              instanceFailures = [
                ...instanceFailures.filter((f) => !r.refused.has(f.instanceId)),
                ...[...r.refused].map(([instanceId, reason]) => ({ instanceId, reason })),
              ];
              return r.comeBack
                ? { comeBack: r.comeBack }
                : { state: { written: st.written + r.written, instances: r.instances } };
            }),
          hooksFor((i) => held[i]!),
        );
    if ("comeBack" in instanceWrite && instanceWrite.comeBack)
      return await stopped({ comeBack: instanceWrite.comeBack });
    for (const [i, reason] of instanceWrite.failed) failedWrites.set(held[i]!, reason);
    const after = instanceWrite.state;
    instancesWritten = after.written;
    if (instancesWritten > 0 || instanceWrite.failed.size > 0)
      await cache.markStale(ref, "our instance writes change the scale set's ETag");

    const modelEdit = applyIntents(model.nics, intents);
    const live = after.instances.filter((i) => !isDeleting(i.provisioningState));
    const next = active.map((d, i): Omit<Outcome, "at"> | undefined => {
      const placed = modelEdit.outcomes[i];
      // Recorded the moment its write failed alone (isolateFailures' onFailed).
      if (failedWrites.has(i)) return undefined;
      if (placed && !placed.ok) return outcomes.failed(placed.reason, config.failedRetryMs);
      const intent = intents[i] as PoolIntent;
      const everywhere =
        intentSatisfied(model.nics, intent) === true &&
        live.every((inst) => intentSatisfied(inst.nics, intent) !== false);
      return {
        kind: "applied",
        appliedEtag: model.etag,
        ...((d.state === "absent" || rollsOut) && everywhere ? { appliedEverywhere: true } : {}),
      };
    });
    const observed =
      modelObserved &&
      (instancesObserved || observedSince !== undefined || (rollsOut && !next.some((o) => o?.appliedEverywhere)));
    if (
      !observed &&
      observedSince === undefined &&
      active.some((d, i) => next[i] !== undefined && finishes(d, next[i]!))
    )
      return proveFresh(ref, trigger, passStartedAt, deps, drift);
    const doubt = doubtHoldMs(deps, [model, ...live]);
    await mapLimit(
      active.map((d, i) => [d, next[i]] as const),
      8,
      // A write of ours that may still land on one of these holds back every finish until it cannot.
      ([d, o]) => (o && !(doubt > 0 && finishes(d, o)) ? record(d, o) : Promise.resolve()),
    );
    await drift.settle(true);
    const recheck =
      rollsOut && (await awaitingCrpRollout(ref, live, intents, cache))
        ? comeBack("recheck", ROLLOUT_RECHECK_MS, "CRP is rolling the model out to the instances")
        : undefined;
    const step = nextStep([doubtHold(doubt), recheck], trigger.attempt, config.maxAttempts);
    return report(stats.writes > 0 ? "applied" : "unchanged", declarations.length, {
      ...reportFieldsOf(step),
      ...(instanceFailures.length > 0 ? { instanceFailures } : {}),
    });
  } catch (err) {
    return stopped({ error: err });
  }
}

/**
 * A declaration is finished only from what ARM answered in the same pass (issue 41): a pass that would finish one from
 * a cached row runs again, reading everything from ARM (and writing what that shows is still missing).
 */
async function proveFresh(
  ref: ScaleSetRef,
  trigger: ReconcileTrigger,
  passStartedAt: number,
  deps: ReconcileDeps,
  drift: DriftWatch,
): Promise<ReconcileReport> {
  await drift.settle(false);
  return reconcileScaleSet(ref, { ...trigger, provenSince: passStartedAt }, deps);
}

/** The rows read before `since` without their models (a miss), keeping their Table ETags to store against. */
function forgetModels(p: CachedPartition, since: number): CachedPartition {
  const blind = <M>(e: CachedEntry<M>): CachedEntry<M> => (e.readAt > since ? e : { ...e, model: undefined });
  return {
    scaleSet: p.scaleSet && blind(p.scaleSet),
    instances: new Map([...p.instances].map(([id, e]) => [id, blind(e)])),
  };
}

/**
 * The scale set model from the cache when it is fresh, else from ARM (the caller stores it, unless it writes it): by
 * one LIST of its resource group when other cached scale sets there are due too, else by GET.
 */
async function modelOf(
  ref: ScaleSetRef,
  cached: CachedPartition,
  compute: ComputePort,
  deps: ReconcileDeps,
): Promise<{ model: ScaleSetModel; fromArm: boolean }> {
  if (usable(cached.scaleSet, deps.clock.now(), deps.config.cacheTtlMs))
    return { model: cached.scaleSet.model, fromArm: false };
  const model = (await readThroughGroup(ref, compute, deps)) ?? (await compute.getScaleSet(ref));
  return { model, fromArm: true };
}

/** Writes the model's NICs with If-Match until the edit is empty. */
async function writeModel(
  ref: ScaleSetRef,
  start: ScaleSetModel,
  intents: PoolIntent[],
  compute: ComputePort,
  deps: ReconcileDeps,
  trigger: ReconcileTrigger,
  onRowMarked: () => void,
): Promise<WriteStep<ScaleSetModel>> {
  const result = await ifMatchWrite(
    {
      paced: ref,
      id: ref.id,
      resourceKind: "model",
      logFields: { scaleSetId: ref.id, target: "model" },
      plan: (model) => planNics(model.nics, intents),
      write: (model, nics, opts) => compute.writeScaleSetNics(ref, model, nics, opts),
      read: () => compute.getScaleSet(ref),
      row: {
        beginWrite: (clientRequestId) => {
          onRowMarked();
          return deps.cache.beginWrite(ref, clientRequestId);
        },
        markStale: (reason) => deps.cache.markStale(ref, reason),
        store: (model, base, ours) => deps.cache.storeScaleSet(ref, model, base, ours),
        evict: () => deps.cache.evictScaleSet(ref),
      },
      context: trigger.reason,
    },
    start,
    deps,
  );
  if (result.kind === "come-back") return { comeBack: result.comeBack };
  // A scale set that is gone answers NotFound, which the reconcile handles as a whole: never "gone" here.
  return { state: result.kind === "gone" ? start : result.model };
}

/** The NIC configurations the intents still need, and which pools they move (for the write log). */
function planNics(
  nics: NicConfiguration[],
  intents: PoolIntent[],
): { edit: NicConfiguration[]; pools: string[] } | undefined {
  const edit = applyIntents(nics, intents);
  if (!edit.nics) return undefined;
  return {
    edit: edit.nics,
    pools: intents.filter((i) => intentSatisfied(nics, i) === false).map((i) => `${i.state}:${i.backendPoolId}`),
  };
}

/**
 * The instances with their own NICs and ETags: from the cache when every row is fresh, they add up to the capacity
 * and none of them is to be written, else one LIST (never one GET each). A write is never computed from a cached
 * body: its instance ID may have been reused since, with the same ETag (core/incarnation.ts).
 */
async function instancesOf(
  ref: ScaleSetRef,
  cached: CachedPartition,
  model: ScaleSetModel,
  intents: PoolIntent[],
  compute: ComputePort,
  deps: ReconcileDeps,
): Promise<{ instances: InstanceModel[]; fromArm: boolean }> {
  const now = deps.clock.now();
  const entries = [...cached.instances.values()];
  const allFresh = entries.length > 0 && entries.every((e) => usable(e, now, deps.config.cacheTtlMs));
  if (deps.cache.enabled && allFresh && (model.capacity === undefined || entries.length === model.capacity)) {
    const rows = entries.map((e) => e.model as InstanceModel);
    if (!rows.some((i) => needsWrite(i, intents))) return { instances: rows, fromArm: false };
  }
  // An instance about to be written, whose row holds nothing usable, is not stored as listed (one Table write fewer):
  // its write marks the row and stores the answer, and a write that never begins leaves the row unusable, so the next
  // pass lists again. A usable row is overwritten as listed, so that it never vouches for what the LIST contradicted.
  const writtenNext = (i: InstanceModel) =>
    needsWrite(i, intents) && !usable(cached.instances.get(i.instanceId), now, deps.config.cacheTtlMs);
  return { instances: await listAndStoreInstances(ref, cached, model.etag, compute, deps, writtenNext), fromArm: true };
}

function needsWrite(i: InstanceModel, intents: PoolIntent[]): boolean {
  return !isDeleting(i.provisioningState) && applyIntents(i.nics, intents).nics !== undefined;
}

/**
 * Each instance whose own configuration differs, with its own ETag, a bounded number at a time. An instance ARM
 * refuses (400/403: a dangling ASG or NSG in its own configuration) is that instance's problem, not the intents':
 * it is returned in `refused` and the others are written; the intents the model took stay applied.
 * Long: the bounded parallel instance writes with their per-instance outcomes (written, gone, refused, come back) in
 * one place.
 */
async function writeInstances(
  ref: ScaleSetRef,
  instances: InstanceModel[],
  intents: PoolIntent[],
  compute: ComputePort,
  deps: ReconcileDeps,
  /** When the instances' bodies were read (at the latest): older than the bound, one is read again before its write. */
  readAt: number,
): Promise<{ written: number; instances: InstanceModel[]; refused: Map<string, string>; comeBack?: ComeBack }> {
  let written = 0;
  // The first write that comes back stops the others from starting (those under way finish).
  let later: ComeBack | undefined;
  const refused = new Map<string, string>();
  // What each instance holds after our writes (or vanished: scaled in under us).
  const current = new Map(instances.map((i) => [i.instanceId, i] as const));
  const targets = instances.filter((i) => needsWrite(i, intents));
  await mapLimit(targets, deps.config.instanceConcurrency, async (first) => {
    if (later) return;
    const iref = instanceRef(ref, first.instanceId);
    const result = await ifMatchWrite(
      {
        paced: iref,
        id: iref.id,
        resourceKind: "instance",
        logFields: { scaleSetId: ref.id, target: `instance ${first.instanceId}` },
        plan: (inst) => (isDeleting(inst.provisioningState) ? undefined : planNics(inst.nics, intents)),
        write: (inst, nics, opts) => compute.writeInstanceNics(iref, inst, nics, opts),
        read: () => compute.getInstance(iref),
        row: {
          beginWrite: (clientRequestId) => deps.cache.beginWrite(iref, clientRequestId),
          markStale: (reason) => deps.cache.markStale(iref, reason),
          store: (inst, base, ours) => deps.cache.storeInstance(iref, inst, base, ours),
          evict: () => deps.cache.evictInstance(iref),
        },
        // Scaled in or being deleted under us: nothing to write, and its row must not linger.
        gone: (err) => err instanceof NotFoundError || err instanceof BeingDeletedError,
        age: { readAt, maxAgeMs: deps.config.instanceBodyMaxAgeMs },
      },
      first,
      deps,
    ).catch((err: unknown) => {
      if (!(err instanceof FatalError)) throw err;
      refused.set(first.instanceId, describeError(err));
      deps.log.warn("instance.refused", {
        scaleSetId: ref.id,
        instanceId: first.instanceId,
        error: describeError(err),
      });
      return undefined;
    });
    if (!result) return;
    if (result.kind === "come-back") {
      later ??= result.comeBack;
      return;
    }
    if (result.kind === "gone") current.delete(first.instanceId);
    else current.set(result.model.instanceId, result.model);
    if (result.kind === "written") written++;
  });
  return { written, instances: [...current.values()], refused, ...(later ? { comeBack: later } : {}) };
}
