import type { Config } from "../config";
import { dueForRetry, notFoundOutcome, toIntent, waitingForTarget, type StoredDeclaration } from "../core/declarations";
import { NotFoundError, ThrottledError, TransientError, describeError } from "../core/errors";
import type { InstanceModel, ScaleSetModel } from "../core/models";
import { intentSatisfied } from "../core/networkProfile";
import type {
  CachedPartition,
  Clock,
  ComputePort,
  DeclarationStore,
  Logger,
  ModelCache,
  ReconcileAttempt,
  ReconcileAttempts,
  RefreshCandidate,
  TimerState,
  TimerStateStore,
  WorkQueue,
} from "../core/ports";
import { parseScaleSetId, parseTargetId, type ScaleSetRef } from "../core/resourceIds";
import { inScopes } from "../core/scopes";
import { mapLimit } from "../core/retryPolicy";
import { CallStats } from "./callStats";
import { orchestrationModeOf } from "./vmMembership";
import { groupKeyOf, listPays, listResourceGroup } from "./listResourceGroup";
import { setOldestPendingAge } from "../telemetry/gauges";
import { listAndStoreInstances, storeInstances } from "./listInstances";

/**
 * The timer's safety net for lost, late or filtered events and ageing entries, on a strict ARM read budget counted
 * in requests (a LIST page is one): refresh what is stale or past the TTL (oldest first; the models of several
 * scale sets of one resource group by one LIST of the group, a lone one by GET; one LIST for a scale set's
 * instances, never one GET each), evict what is gone, and enqueue a reconcile wherever what ARM holds differs from
 * what is declared.
 */

export interface StaleDeps {
  compute: ComputePort;
  cache: ModelCache;
  timerState: TimerStateStore;
  declarations: DeclarationStore & { listAll(opts?: { purge?: boolean }): AsyncIterable<StoredDeclaration> };
  queue: WorkQueue;
  /** Chains of re-enqueued reconciles in progress (optional: without it every retry starts at attempt 0). */
  attempts?: Pick<ReconcileAttempts, "list">;
  clock: Clock;
  log: Logger;
  config: Pick<Config, "scopes" | "cacheTtlMs" | "reconcileMaxReads" | "idleEvictMs">;
}

export interface StaleRunSummary {
  visited: number;
  refreshed: number;
  evicted: number;
  driftFound: number;
  enqueued: number;
  removedDeclarations: number;
  /** Scale sets not asked again because their re-enqueued reconcile is still due to come. */
  waitingForRetry: number;
  /** Declared scale sets ARM answered 404 for, not read this run: their wait for the target to exist is not over. */
  waitingForTarget: number;
  readsUsed: number;
  /** Visits not made because their subscription's reads are paused (this run's throttle or an earlier one's). */
  pausedVisits: number;
  /** Visits an ARM read failed for a while (a 5xx, no answer): their rows stay due for the next run. */
  failedVisits: number;
  /** readsUsed by kind: resource group LIST pages, scale set GETs, VM LISTs. */
  listPages: number;
  scaleSetGets: number;
  instanceLists: number;
  /** Scale sets a complete LIST of their group did not show (each then read by GET). */
  notListed: number;
  /** This run met a throttle: the latest time a subscription it paused waits for. */
  throttledUntil?: number;
  /** Visits were skipped for a pause an earlier run stored: the latest time such a subscription waits for. */
  skippedUntil?: number;
  durationMs: number;
}

interface Visit {
  key: string;
  ref: ScaleSetRef;
  scaleSetRow: RefreshCandidate | undefined;
  instanceRows: RefreshCandidate[];
  since: number;
}

class BudgetSpent extends Error {}

/**
 * Transient ARM failures (a 5xx, no answer) a run goes on past, one visit each: a lone 503 costs that scale set one
 * timer period, not the whole sweep. One more says ARM is in trouble: the run ends on it, as a failed run.
 */
export const TRANSIENT_FAILURES_TOLERATED = 2;

/** The scale set's own row is due, or it has no instance rows due (a scale set new to the cache needs both). */
function needsModelOf(v: Visit): boolean {
  return v.scaleSetRow !== undefined || v.instanceRows.length === 0;
}

/**
 * A declaration still pending this long after it was stored has probably lost the reconcile meant for it (the
 * message that opened its declare window was poisoned, an enqueue failed after the store): ask again, without
 * any ARM read. A reconcile that is merely slow costs one extra, joined or no-op, run.
 */
export const STUCK_PENDING_MS = 10 * 60_000;

/**
 * What one run shares between its phases; each phase reads it and adds to it, in the order reconcileStale calls them.
 */
interface RunState {
  deps: StaleDeps;
  now: number;
  stats: CallStats;
  /** deps.compute, counted against the read budget. */
  compute: ComputePort;
  summary: StaleRunSummary;
  /** Declared scale sets, by key, with their declarations. */
  declared: Map<string, { ref: ScaleSetRef; decls: StoredDeclaration[] }>;
  /** Chains of re-enqueued reconciles, by target key. */
  chains: Map<string, ReconcileAttempt>;
  /** Scale sets already asked for a reconcile in this run. */
  asked: Set<string>;
  /** Key of the last uncached scale set visited (where the next run goes on), "" once every visit is done. */
  cursor: string;
  /** Where a resource group's LIST stopped on the budget, to go on from next run. */
  resume: TimerState["resume"];
  /** Subscriptions whose reads wait, until when (stored ones still ahead, and this run's). */
  paused: Map<string, number>;
  /** The pauses this run added. */
  pausedNow: Set<string>;
}

/** What a group's LIST gave one of its visits: the partition read before the LIST, and the model, if listed. */
interface Prefetched {
  partition: CachedPartition;
  model: ScaleSetModel | undefined;
  stored: boolean;
}

export async function reconcileStale(deps: StaleDeps): Promise<StaleRunSummary> {
  const started = deps.clock.now();
  const stats = new CallStats();
  const run: RunState = {
    deps,
    now: started,
    stats,
    compute: stats.wrap(deps.compute),
    summary: emptySummary(),
    declared: new Map(),
    chains: new Map(),
    asked: new Set(),
    cursor: "",
    resume: undefined,
    paused: new Map(),
    pausedNow: new Set(),
  };
  const finish = () => finishSummary(run, started);

  const { retryDue, vmRetries } = await scanDeclarations(run);
  await askDueChains(run, retryDue, vmRetries);
  const visits = await scanCache(run);

  const state = await deps.timerState.read();
  run.cursor = state.cursor;
  run.resume = state.resume;
  for (const [sub, until] of Object.entries(state.paused)) if (until > run.now) run.paused.set(sub, until);

  const { inScope, cachedKeys } = await planVisits(run, visits, state.cursor);
  const listGroups = prefetchGroups(run, inScope, cachedKeys);
  const prefetched = new Map<string, Prefetched>();
  try {
    for (const v of inScope) {
      if (skipPaused(run, v.ref)) continue;
      try {
        const listGroup = listGroups.get(groupKeyOf(v.ref));
        if (listGroup && needsModelOf(v) && !prefetched.has(v.key))
          await prefetchGroup(run, v.ref, listGroup, prefetched);
        await visit(run, v, prefetched.get(v.key));
      } catch (err) {
        if (err instanceof ThrottledError) pause(run, v.ref, err);
        else if (err instanceof TransientError && run.summary.failedVisits < TRANSIENT_FAILURES_TOLERATED) {
          run.summary.failedVisits++;
          deps.log.warn("reconcileStale.visit-failed", { scaleSetId: v.ref.id, error: describeError(err) });
        } else throw err;
      }
    }
    // A visit skipped for a pause or failed keeps the cursor where it was: the round over uncached scale sets is not
    // over.
    if (run.summary.pausedVisits === 0 && run.summary.failedVisits === 0) run.cursor = "";
  } catch (err) {
    if (!(err instanceof BudgetSpent)) throw err;
  }
  const summary = finish();
  await saveState(run, state, summary);
  return summary;
}

/** A visit whose subscription's reads wait is not made: counted, and in the summary if an earlier run paused it. */
function skipPaused(run: RunState, ref: ScaleSetRef): boolean {
  const sub = ref.subscriptionId.toLowerCase();
  const until = run.paused.get(sub);
  if (until === undefined || until <= run.deps.clock.now()) return false;
  run.summary.pausedVisits++;
  if (!run.pausedNow.has(sub)) run.summary.skippedUntil = Math.max(run.summary.skippedUntil ?? 0, until);
  return true;
}

/**
 * A throttle (a 429, or a wait of the read pacer longer than an invocation sleeps) pauses the reads of that
 * subscription alone: ARM's read bucket and CRP's windows are each subscription's own, so the run goes on with the
 * others, and the next runs skip it until the wait is over.
 */
function pause(run: RunState, ref: ScaleSetRef, err: ThrottledError): void {
  const sub = ref.subscriptionId.toLowerCase();
  const until = run.deps.clock.now() + err.retryAfterMs;
  run.paused.set(sub, Math.max(run.paused.get(sub) ?? 0, until));
  run.pausedNow.add(sub);
  run.summary.throttledUntil = Math.max(run.summary.throttledUntil ?? 0, until);
  run.deps.log.warn("reconcileStale.throttled", {
    subscriptionId: sub,
    scaleSetId: ref.id,
    retryAfterMs: err.retryAfterMs,
    error: describeError(err),
  });
}

function emptySummary(): StaleRunSummary {
  return {
    visited: 0,
    refreshed: 0,
    evicted: 0,
    driftFound: 0,
    enqueued: 0,
    removedDeclarations: 0,
    waitingForRetry: 0,
    waitingForTarget: 0,
    readsUsed: 0,
    pausedVisits: 0,
    failedVisits: 0,
    listPages: 0,
    scaleSetGets: 0,
    instanceLists: 0,
    notListed: 0,
    durationMs: 0,
  };
}

function finishSummary(run: RunState, started: number): StaleRunSummary {
  const s = run.summary;
  s.readsUsed = run.stats.reads;
  s.listPages = run.stats.byCall["listScaleSetsPage"] ?? 0;
  s.scaleSetGets = run.stats.byCall["getScaleSet"] ?? 0;
  s.instanceLists = run.stats.byCall["listInstances"] ?? 0;
  s.durationMs = run.deps.clock.now() - started;
  run.deps.log.info("reconcileStale", { ...s });
  return s;
}

/** Scan declarations: grouped per scale set; failed ones due for a retry and finished absents handled on the way. */
async function scanDeclarations(
  run: RunState,
): Promise<{ retryDue: Map<string, string>; vmRetries: Map<string, string> }> {
  const { deps, now, declared } = run;
  const retryDue = new Map<string, string>();
  const vmRetries = new Map<string, string>();
  let oldestPending = Infinity;
  // The timer, not a reader, drops removal marks past their retention.
  for await (const d of deps.declarations.listAll({ purge: true })) {
    if (d.outcome.kind === "pending") oldestPending = Math.min(oldestPending, Date.parse(d.declaredAt) || now);
    const target = parseTargetId(d.scaleSetId);
    if (!target.ok) continue;
    if (d.state === "absent" && d.outcome.kind === "applied" && d.outcome.appliedEverywhere) {
      if (await deps.declarations.remove(target.value, d)) run.summary.removedDeclarations++;
      continue;
    }
    // A VM target has no model to look at here: its failed or stuck declarations are retried, its NICs are read by its
    // reconcile.
    if (target.value.kind === "vm") {
      if (dueForRetry(d, now) || stuckPending(d, now)) vmRetries.set(target.value.key, target.value.id);
      continue;
    }
    const scaleSet = target.value;
    const group = declared.get(scaleSet.key) ?? { ref: scaleSet, decls: [] };
    group.decls.push(d);
    declared.set(scaleSet.key, group);
    if (dueForRetry(d, now)) retryDue.set(scaleSet.key, "timer: retry of a failed declaration");
    else if (d.outcome.kind === "pending" && stuckPending(d, now) && !retryDue.has(scaleSet.key)) {
      retryDue.set(scaleSet.key, `timer: declaration pending since ${d.outcome.at}`);
    }
  }
  setOldestPendingAge(oldestPending === Infinity ? 0 : now - oldestPending);
  return { retryDue, vmRetries };
}

function stuckPending(d: StoredDeclaration, now: number): boolean {
  return d.outcome.kind === "pending" && now - Date.parse(d.outcome.at) >= STUCK_PENDING_MS;
}

/**
 * A scale set whose reconcile re-enqueued itself has a message on the way (invisible until its Retry-After):
 * nothing to add until that time has well passed. After that the message was lost, and the chain goes on from
 * its attempt count rather than from zero, so POOLSYNC_MAX_ATTEMPTS bounds it.
 */
function waiting(run: RunState, key: string): boolean {
  const chain = run.chains.get(key);
  return chain !== undefined && run.now < chain.nextAttemptAt + STUCK_PENDING_MS;
}

/** Due chains: a reconcile for each VM and scale set whose declaration is due for a retry or stuck pending. */
async function askDueChains(
  run: RunState,
  retryDue: Map<string, string>,
  vmRetries: Map<string, string>,
): Promise<void> {
  const { deps, summary: s } = run;
  for (const id of vmRetries.values()) {
    await deps.queue.enqueueReconcile(id, "timer: retry of a failed or pending declaration");
    s.enqueued++;
  }
  if (deps.attempts) run.chains = await deps.attempts.list();
  for (const [key, reason] of retryDue) {
    const group = run.declared.get(key)!;
    if (waiting(run, key)) {
      s.waitingForRetry++;
      continue;
    }
    const chain = run.chains.get(key);
    await deps.queue.enqueueReconcile(group.ref.id, reason, chain ? { attempt: chain.attempt } : {});
    run.asked.add(key);
    s.enqueued++;
  }
}

/** Cache rows: refresh candidates of declared scale sets; idle rows of undeclared ones are evicted, never read. */
async function scanCache(run: RunState): Promise<Map<string, Visit>> {
  const { deps, now, declared } = run;
  const candidates = await deps.cache.listRefreshCandidates(now - deps.config.cacheTtlMs);
  const visits = new Map<string, Visit>();
  const idle = new Map<string, { ref: ScaleSetRef; newest: number }>();
  for (const c of candidates) {
    const ref = parseScaleSetId(c.scaleSetId);
    if (!ref.ok) continue;
    if (!declared.has(ref.value.key)) {
      const i = idle.get(ref.value.key) ?? { ref: ref.value, newest: 0 };
      i.newest = Math.max(i.newest, c.touchedAt);
      idle.set(ref.value.key, i);
      continue;
    }
    const v = visits.get(ref.value.key) ?? {
      key: ref.value.key,
      ref: ref.value,
      scaleSetRow: undefined,
      instanceRows: [],
      since: Number.POSITIVE_INFINITY,
    };
    if (c.instanceId === undefined) v.scaleSetRow = c;
    else v.instanceRows.push(c);
    v.since = Math.min(v.since, c.since);
    visits.set(ref.value.key, v);
  }
  for (const { ref, newest } of idle.values()) {
    if (now - newest >= deps.config.idleEvictMs) {
      await deps.cache.evictScaleSet(ref);
      run.summary.evicted++;
    }
  }
  return visits;
}

/**
 * Plan visits: oldest first; then declared scale sets the cache knows nothing of, in key order from where the
 * last run stopped; only those inside the scopes.
 */
async function planVisits(
  run: RunState,
  visits: Map<string, Visit>,
  lastCursor: string,
): Promise<{ inScope: Visit[]; cachedKeys: Set<string> }> {
  const { deps, declared } = run;
  const ordered = [...visits.values()].sort((a, b) => a.since - b.since);
  // A target ARM answered 404 for is looked at again only when its wait is over (an event asks a reconcile at once).
  const uncached = [...declared.keys()]
    .filter((k) => !visits.has(k))
    .filter((k) => {
      const waits = declared.get(k)!.decls.every((d) => waitingForTarget(d, run.now));
      if (waits) run.summary.waitingForTarget++;
      return !waits;
    })
    .sort();
  const rotated = [...uncached.filter((k) => k > lastCursor), ...uncached.filter((k) => k <= lastCursor)];
  const cachedKeys = await deps.cache.listCachedScaleSets();
  for (const key of rotated) {
    if (cachedKeys.has(key)) continue;
    const group = declared.get(key)!;
    ordered.push({ key, ref: group.ref, scaleSetRow: undefined, instanceRows: [], since: Number.POSITIVE_INFINITY });
  }
  const inScope = ordered.filter((v) => inScopes(deps.config.scopes, v.ref.subscriptionId, v.ref.resourceGroup));
  return { inScope, cachedKeys };
}

/**
 * Prefetch groups: resource groups where one LIST reads the models of several scale sets due for a read, in fewer
 * requests than a GET each.
 */
function prefetchGroups(run: RunState, inScope: Visit[], cachedKeys: Set<string>): Map<string, Visit[]> {
  const known = new Map<string, number>();
  for (const key of new Set([...run.declared.keys(), ...cachedKeys])) {
    const ref = parseScaleSetId(key);
    if (ref.ok) known.set(groupKeyOf(ref.value), (known.get(groupKeyOf(ref.value)) ?? 0) + 1);
  }
  const dueByGroup = new Map<string, Visit[]>();
  for (const v of inScope) {
    if (!needsModelOf(v)) continue;
    const g = groupKeyOf(v.ref);
    dueByGroup.set(g, [...(dueByGroup.get(g) ?? []), v]);
  }
  return new Map([...dueByGroup].filter(([g, vs]) => run.deps.cache.enabled && listPays(vs.length, known.get(g) ?? 0)));
}

/** One group's LIST, at the first of its visits: every member's model, refreshed at once if it has a row. */
async function prefetchGroup(
  run: RunState,
  ref: ScaleSetRef,
  listGroup: Visit[],
  prefetched: Map<string, Prefetched>,
): Promise<void> {
  const { deps, stats } = run;
  const g = groupKeyOf(ref);
  if (stats.reads + 1 > deps.config.reconcileMaxReads) throw new BudgetSpent();
  // Every row's Table ETag is read BEFORE the LIST: a store conditional on it loses to an event's
  // invalidation that came while the LIST was in flight, as after a GET.
  const partitions = new Map<string, CachedPartition>();
  await mapLimit(
    listGroup,
    8,
    async (member) => void partitions.set(member.key, await deps.cache.readPartition(member.ref)),
  );
  const resume = run.resume;
  const from = resume?.group === g ? resume.nextLink : undefined;
  const listed = await listResourceGroup(
    run.compute,
    { subscriptionId: ref.subscriptionId, resourceGroup: ref.resourceGroup },
    { maxPages: deps.config.reconcileMaxReads - stats.reads, ...(from ? { resumeFrom: from } : {}) },
  );
  run.resume = listed.resumeAt ? { group: g, nextLink: listed.resumeAt } : resume?.group === g ? undefined : resume;
  for (const member of listGroup) {
    const partition = partitions.get(member.key)!;
    const model = listed.models.get(member.key);
    // A cached row is refreshed at once, so the reads are not lost if the budget ends the run before its visit;
    // a scale set new to the cache is stored with its instances, at its visit, or not at all.
    let stored = false;
    if (model && member.scaleSetRow !== undefined) {
      await deps.cache.storeScaleSet(member.ref, model, member.scaleSetRow.rowEtag);
      run.summary.refreshed++;
      stored = true;
    }
    if (!model && listed.complete) run.summary.notListed++;
    prefetched.set(member.key, { partition, model, stored });
  }
}

/**
 * Visit: read what is due of one scale set (model, instances), store it, and ask for a reconcile if it drifted.
 * Long: one scale set's visit spends one read budget over its model and instances in order, stopping where the budget
 * ends; the steps share that budget.
 */
async function visit(run: RunState, v: Visit, pre: Prefetched | undefined): Promise<void> {
  const { deps, stats, summary: s } = run;
  const needsModel = needsModelOf(v);
  const needsInstances = v.instanceRows.length > 0 || v.scaleSetRow === undefined;
  // A scale set the LIST did not show falls back to a GET: only a GET's 404 says it is gone (a LIST may lag).
  const modelCost = needsModel && !pre?.model ? 1 : 0;
  // A scale set new to the cache needs its VM LIST too; other instance reads may be vouched for by the model's
  // ETag (no read), so their budget is checked just before the VM LIST.
  const newCost = v.scaleSetRow === undefined && needsInstances ? 1 : 0;
  if (stats.reads + modelCost + newCost > deps.config.reconcileMaxReads) throw new BudgetSpent();
  s.visited++;
  const decls = run.declared.get(v.key)!.decls;
  let drift: boolean;
  try {
    const partition = pre?.partition ?? (await deps.cache.readPartition(v.ref));
    let model: ScaleSetModel | undefined = partition.scaleSet?.model;
    if (needsModel) {
      model = pre?.model ?? (await run.compute.getScaleSet(v.ref));
      if (!pre?.stored) {
        await deps.cache.storeScaleSet(v.ref, model, v.scaleSetRow?.rowEtag ?? partition.scaleSet?.rowEtag);
        s.refreshed++;
      }
    }
    // A Flexible scale set has no VMSS VMs to list (Azure refuses the API): its VMs' NICs are read by its reconcile.
    const flexible = model !== undefined && orchestrationModeOf(model) !== "Uniform";
    let instances: InstanceModel[] = flexible
      ? []
      : [...partition.instances.values()].flatMap((e) => (e.model ? [e.model] : []));
    // Every instance write changes the scale set's ETag (CRP's own internal operation after each instance write): a
    // model whose ETag is still the one read *before* the cached instances were listed vouches for them, which are
    // only old (no event said any was written). Not one read after them: it may already hold a change the rows
    // miss (an event lost, the scale set row re-read alone), and vouching would keep such a row fresh for good.
    const cachedEtag = partition.scaleSet?.model?.etag;
    const vouched =
      needsModel &&
      model !== undefined &&
      cachedEtag !== undefined &&
      model.etag === cachedEtag &&
      partition.scaleSet?.stale === false &&
      v.instanceRows.length === partition.instances.size &&
      v.instanceRows.every((r) => !r.stale) &&
      instances.length === partition.instances.size &&
      [...partition.instances.values()].every((e) => e.listedUnder === model?.etag);
    if (vouched) {
      // Each instance row stored again as listed under the model's ETag, which vouches for it.
      await storeInstances(v.ref, partition, instances, model?.etag, deps.cache);
      s.refreshed += instances.length;
    } else if (needsInstances && !flexible) {
      if (stats.reads + 1 > deps.config.reconcileMaxReads) throw new BudgetSpent();
      // Listed after the model was read (this GET, or the cached row when only instance rows were due).
      instances = await listAndStoreInstances(v.ref, partition, model?.etag, run.compute, deps);
      s.refreshed += instances.length;
    }
    const intents = decls.filter((d) => d.outcome.kind === "applied" || d.outcome.kind === "pending").map(toIntent);
    drift = intents.some(
      (intent) =>
        (model ? intentSatisfied(model.nics, intent) === false : false) ||
        instances.some(
          (i) => (i.provisioningState ?? "").toLowerCase() !== "deleting" && intentSatisfied(i.nics, intent) === false,
        ),
    );
  } catch (err) {
    if (err instanceof NotFoundError) {
      await deps.cache.evictScaleSet(v.ref);
      const now = deps.clock.now();
      const at = new Date(now).toISOString();
      await mapLimit(decls, 8, (d) =>
        deps.declarations
          .recordOutcome(v.ref, d, { ...notFoundOutcome(d.outcome, err.message, now), at })
          .then(() => undefined),
      );
      s.evicted++;
      return;
    }
    throw err;
  }
  if (!deps.cache.enabled || v.since === Number.POSITIVE_INFINITY) run.cursor = v.key;
  if (drift) {
    s.driftFound++;
    // What ARM just showed differs from what is declared: the reconcile must see it too, not a cached row that
    // may still claim otherwise (a store that lost a race, an instance the cache never listed). Not beside a
    // re-enqueued reconcile still to come, nor twice in one run; a lost chain goes on with its count.
    if (!waiting(run, v.key) && !run.asked.has(v.key)) {
      const chain = run.chains.get(v.key);
      await deps.queue.enqueueReconcile(v.ref.id, "timer: observed differs from declared", {
        fresh: true,
        ...(chain ? { attempt: chain.attempt } : {}),
      });
      s.enqueued++;
    }
  }
}

/**
 * Save state: where the next run goes on, the subscriptions whose reads still wait, and (every run that read ARM) what
 * this one spent its reads on, for the status report. A throttled run always writes.
 */
async function saveState(run: RunState, before: TimerState, summary: StaleRunSummary): Promise<void> {
  const { cursor, resume } = run;
  const now = run.deps.clock.now();
  const paused = Object.fromEntries([...run.paused].filter(([, until]) => until > now));
  const unchanged =
    run.pausedNow.size === 0 &&
    Object.keys(paused).length === Object.keys(before.paused).length &&
    cursor === before.cursor &&
    resume === before.resume;
  if (unchanged && summary.readsUsed === 0) return;
  await run.deps.timerState.write({
    paused,
    cursor,
    ...(resume ? { resume } : {}),
    lastRun: lastRunOf(summary, run.deps.clock.now()),
  });
}

function lastRunOf(s: StaleRunSummary, at: number): NonNullable<TimerState["lastRun"]> {
  return {
    at,
    listPages: s.listPages,
    scaleSetGets: s.scaleSetGets,
    instanceLists: s.instanceLists,
    visited: s.visited,
  };
}
