import { randomUUID } from "node:crypto";
import { loadConfig, type Config } from "../config";
import type { Clock, ComputePort, Logger, NetworkPort, ProblemLog } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import { ReadPacer } from "../azure/readPacing";
import { RequestIds } from "../azure/requestIds";
import { ContendedWakes } from "../reconcile/contendedWakes";
import { checkedHandover } from "../reconcile/leaseHandover";
import { ProblemLogTable } from "../azure/problemLogTable";
import { TimerStateTable } from "../azure/timerStateTable";
import { UnheldEventTable } from "../azure/unheldEventTable";
import { CensusSummaryTable } from "../azure/censusSummaryTable";
import { ResourceOwnerTable } from "../azure/resourceOwnerTable";
import type { TargetStore } from "../azure/targets/targetStore";
import { TargetDeclarations } from "../azure/targets/targetDeclarations";
import { TargetCache } from "../azure/targets/targetCache";
import { StoreTargetPasses } from "../azure/targets/targetPasses";
import { StoreTargetEvents } from "../azure/targets/targetEvents";
import { TargetHistoryTable } from "../azure/targets/targetHistory";
import { TargetDriftTable } from "../azure/targets/targetDrifts";
import { declareTarget } from "../azure/targets/declareTarget";
import { learnWriteBudget } from "../pacing/learnWriteBudget";
import { ensureQueue, ensureTable, queueClient, tableClient, type StoragePolicies } from "../azure/storageClients";
import { StorageWorkQueue } from "../azure/workQueue";
import type { Coalescer } from "../reconcile/coalescer";
import { IntakeBatcher } from "../reconcile/intakeBatch";
import { WritePacer } from "../pacing/writePacer";
import { SharedWriteBudget } from "../pacing/sharedWriteBudget";
import { SharedBudgetTable } from "../azure/sharedBudgetTable";
import { ReconcileRunner } from "../reconcile/reconcileRunner";
import { reconcileStale, type StaleRunSummary } from "../reconcile/reconcileStale";
import { handleResourceEvent } from "../reconcile/handleResourceEvent";
import type { EventOutcome } from "../reconcile/resourceEvent";
import { handleQueueMessage, type HandleOutcome, type QueueMessageMeta } from "../reconcile/handleQueueMessage";
import type { ReconcileReport, ReconcileTrigger } from "../reconcile/vocabulary";
import { reconcileTarget, type PoolDeps } from "../reconcile/reconcileTarget";
import { PoolWrites } from "../reconcile/poolWrites";
import { PoolKindsKnown } from "../reconcile/poolKindsKnown";
import { GatewayClaimTable } from "../azure/targets/gatewayClaimRows";
import { OldLayoutSweeper } from "../azure/oldLayoutSweep";
import { planTarget, type TargetPlan } from "../reconcile/planTarget";
import type { Declaration } from "../core/declarations";
import type { DeclaredResult } from "../core/targetPasses";
import type { IntakeDeclare } from "../intake/acceptDeclaration";
import { jsonLogger } from "./logger";
import { eventAttributes, recordEventOutcome } from "./observe";
import { inSpan } from "../telemetry/tracing";
import { systemClock } from "./systemClock";
import { armComputeFromConfig, armNetworkFromConfig, checkedWriteFlight } from "./armEdges";
import { targetStoreFromConfig } from "./targetStoreFromConfig";
import { passProblems } from "./passProblems";
import { MessagesInHand } from "./messagesInHand";
import { timerRun } from "./timerRun";
import { passDeps, type ProcessDeps } from "./passDeps";

/**
 * The composition root: builds every part once per process from the validated config and wires them together, in
 * named pieces (storage, ARM and pacing, the runner, the triggers' entry points). It holds no behaviour of its own:
 * each part lives in the module named for it.
 */

// Tools and tests build single edges from the settings without the whole app.
export { armComputeFromConfig, armEdgeOptions, armNetworkFromConfig } from "./armEdges";
export { targetStoreFromConfig } from "./targetStoreFromConfig";

/** Everything a trigger needs, built once per process from the validated config. */
export interface Services {
  config: Config;
  clock: Clock;
  log: Logger;
  compute: ComputePort;
  network: NetworkPort;
  /** The targets table: one partition per target (azure/targets/rowKeys.ts). */
  store: TargetStore;
  /** The declarations outside a pass (the timer, the status views, tests). */
  declarations: TargetDeclarations;
  /** The cache outside a pass (the timer, events, the status views, plans). */
  cache: TargetCache;
  /** Passes that met a 412, a throttle or a failure, newest first: each target's last (its control row) and the log. */
  problems: ProblemLog & Pick<ProblemLogTable, "trim">;
  /** The timer's memory between runs (its LIST resume point, the last run's reads by kind for the status report). */
  timerState: TimerStateTable;
  unheld: UnheldEventTable;
  /** The timer's full census of the cache, for status views over a cache larger than they scan. */
  censusSummary: CensusSummaryTable;
  queue: StorageWorkQueue;
  /** Each target's timeline: declarations, writes, drifts, failures. */
  history: TargetHistoryTable;
  /** Each declaration's most recent drift, attributed to the writer whose event invalidated the row. */
  drifts: TargetDriftTable;
  /** What a reconcile of the target would write now: reads as the reconcile would, writes nothing. */
  plan(ref: TargetRef, extra?: Declaration): Promise<TargetPlan>;
  coalescer: Coalescer<ReconcileTrigger, ReconcileReport>;
  /** Stores a declaration that came by HTTP (batched with others of its target) and schedules its pass. */
  declare: IntakeDeclare;
  /** What storing a declaration would answer (a dry run), writing nothing. */
  previewDeclare(ref: TargetRef, d: Declaration): Promise<DeclaredResult>;
  /** Creates the tables and queues if missing (the deployment creates them; Azurite starts empty). */
  ready(): Promise<void>;
  reconcile(ref: TargetRef, trigger: ReconcileTrigger): Promise<ReconcileReport>;
  handleQueueMessage(body: unknown, meta: QueueMessageMeta): Promise<HandleOutcome>;
  handleResourceEvent(raw: unknown): Promise<EventOutcome>;
  reconcileStale(): Promise<StaleRunSummary>;
}

export interface ServiceOverrides {
  clock?: Clock;
  log?: Logger;
  compute?: ComputePort;
  network?: NetworkPort;
  random?: () => number;
  /** Extra Table pipeline policies, e.g. one that counts Table round trips (benchmarks). */
  storagePolicies?: StoragePolicies;
  /**
   * Seconds of `clock` per real second (the simulator's time scale, in benchmarks and the soak; default 1): what is
   * counted in real time (the queue's visibility, the ARM request timeout) is converted with it.
   */
  timeScale?: number;
}

/** The two tables and the queues, with what lives in them. */
function storageOf(config: Config, clock: Clock, baseLog: Logger, overrides: ServiceOverrides) {
  const policies = overrides.storagePolicies ?? [];
  // Two tables: the targets table (a partition per target: its control row, declarations, cache rows, history, drifts,
  // writers) and the shared one (what is no single target's: the timer's state and index, owners of NICs and VMs, the
  // problem log, the write budgets, the unheld-event tally, the census).
  const store = targetStoreFromConfig(config, { clock, log: baseLog, storagePolicies: policies });
  const sharedTable = tableClient(config.storage, config.cacheTable, policies, config.tableTimeoutMs);
  const history = new TargetHistoryTable(store);
  const log = baseLog;
  const owners = new ResourceOwnerTable(sharedTable);
  return {
    clock,
    store,
    sharedTable,
    history,
    log,
    declarations: new TargetDeclarations(store),
    cache: new TargetCache(store, owners),
    passes: new StoreTargetPasses(store, owners),
    events: new StoreTargetEvents(store, owners),
    drifts: new TargetDriftTable(store),
    problems: passProblems(new ProblemLogTable(sharedTable), store),
    oldLayout: new OldLayoutSweeper(sharedTable, store.table, clock.now),
    timerState: new TimerStateTable(sharedTable, clock.now),
    unheld: new UnheldEventTable(sharedTable),
    censusSummary: new CensusSummaryTable(sharedTable),
    queue: new StorageWorkQueue(
      queueClient(config.storage, config.queueName),
      queueClient(config.storage, config.poisonQueueName),
      log,
      overrides.timeScale ?? 1,
    ),
  };
}

/** The ARM edges and the budgets every write and read is paced in (this host's, and the subscription's shared ones). */
function armOf(config: Config, clock: Clock, sharedTable: ReturnType<typeof tableClient>, overrides: ServiceOverrides) {
  // ARM's read bucket is one per subscription and principal: Compute and Network reads share one pacer.
  const readPacer = config.pacingEnabled ? new ReadPacer(clock, config.pacingMaxWaitMs) : undefined;
  const lateness = () => readPacer?.latenessMs() ?? 0;
  const pacer = new WritePacer(clock.now, config.pacingEnabled, lateness);
  // The write pacer learns every host's spending from ARM's and CRP's answers.
  const compute =
    overrides.compute ??
    armComputeFromConfig(config, clock, readPacer, (o) => {
      if (config.pacingEnabled) learnWriteBudget(pacer, o);
    });
  const network = overrides.network ?? armNetworkFromConfig(config, clock, readPacer);
  // The subscription-wide budgets are reserved in storage before they are spent, so two hosts never spend one token.
  const sharedBudget = config.pacingEnabled
    ? new SharedWriteBudget(new SharedBudgetTable(sharedTable, clock.now), clock.now, randomUUID(), {
        armLeft: (sub) => pacer.known(sub),
        counted: (sub, kind, suffix) => pacer.counted(sub, kind, suffix),
        latenessMs: lateness,
      })
    : undefined;
  return { readPacer, pacer, sharedBudget, compute, network, requestIds: new RequestIds(config.cacheKey) };
}

/** What every pass of this process shares: the ARM edges, the pacing, the request ids. */
function processDepsOf(
  config: Config,
  clock: Clock,
  log: Logger,
  arm: ReturnType<typeof armOf>,
  overrides: ServiceOverrides,
): ProcessDeps {
  return {
    compute: arm.compute,
    network: arm.network,
    clock,
    log,
    config,
    pacer: arm.pacer,
    ...(arm.sharedBudget ? { sharedBudget: arm.sharedBudget } : {}),
    newRequestId: (resourceId: string) => arm.requestIds.next(resourceId),
    ...(overrides.random ? { random: overrides.random } : {}),
  };
}

/** IP-based pools (issue 43): their kind as each pool says it, and their writes, coalesced across targets. */
function poolsOf(config: Config, processDeps: ProcessDeps, store: TargetStore): PoolDeps {
  return {
    kinds: new PoolKindsKnown(processDeps.clock.now, config.cacheTtlMs),
    writes: new PoolWrites({
      ...processDeps,
      gatherMs: config.gatherMs,
      // A burst's declarations reach the pool over about a declare window: its pool write waits at most that long.
      maxGatherMs: Math.max(config.gatherMs, config.declareWindowMs),
    }),
    claims: new GatewayClaimTable(store, processDeps.log),
  };
}

/** The runner: every pass of every target goes through it (reconcileRunner.ts says how, in order). */
function runnerOf(
  config: Config,
  processDeps: ProcessDeps,
  pools: PoolDeps,
  storage: ReturnType<typeof storageOf>,
  pacer: WritePacer,
  inHand: MessagesInHand,
  timeScale: number,
): ReconcileRunner {
  const { clock } = processDeps;
  return new ReconcileRunner({
    reconcile: (ref, trigger, lease, open) =>
      reconcileTarget(ref, trigger, passDeps({ ...processDeps, config }, storage.history, pools, ref.id, lease, open)),
    passes: storage.passes,
    queue: storage.queue,
    problems: storage.problems,
    clock,
    log: processDeps.log,
    leaseTtlMs: config.reconcileLeaseMs,
    writeFlightMs: checkedWriteFlight(config, timeScale),
    writeDoubtMs: config.writeDoubtMs,
    newHolderId: randomUUID,
    // The lease also hands the scale set's own write budgets (CRP's per-resource buckets) from one holder to the next.
    handover: {
      snapshot: (ref) => JSON.stringify(ref.kind === "scaleSet" ? pacer.snapshot(ref) : {}),
      restore: (text, ref) => pacer.restore(checkedHandover(text, ref, clock.now())),
    },
    gatherMs: config.gatherMs,
    ...(config.declareWindowMs > 0
      ? {
          windowMs: config.declareWindowMs,
          // Only with the window on: without it a declaration reconciles in its own invocation, gathered, and would
          // wait on the very backlog it belongs to.
          intakeBusy: () => inHand.intake.busy(),
        }
      : {}),
  });
}

/** Creates the tables and queues if missing, once (a failure lets the next invocation try again). */
function readyOnce(storage: ReturnType<typeof storageOf>): () => Promise<void> {
  let ready: Promise<void> | undefined;
  return () =>
    (ready ??= Promise.all([
      ensureTable(storage.store.table),
      ensureTable(storage.sharedTable),
      ensureQueue(storage.queue.queue),
      ensureQueue(storage.queue.poison),
    ]).then(
      () => undefined,
      (err) => {
        ready = undefined;
        throw err;
      },
    ));
}

/** The queue trigger's entry: counts the message in hand while the handler validates, declares or runs its pass. */
function queueEntry(
  config: Config,
  storage: ReturnType<typeof storageOf>,
  host: { inHand: MessagesInHand; ready: () => Promise<void>; batcher: IntakeBatcher; runner: ReconcileRunner },
): Services["handleQueueMessage"] {
  const { inHand, runner } = host;
  const { log, queue } = storage;
  return async (body, meta) => {
    const done = inHand.took(body);
    await host.ready().catch((err: unknown) => {
      done();
      throw err;
    });
    return handleQueueMessage(body, meta, {
      scopes: config.scopes,
      bindings: config.bindings,
      declare: (req) => host.batcher.declare(req),
      windowOn: config.declareWindowMs > 0,
      busy: (r) => inHand.backlog || runner.coalescer.busy(r.key),
      log,
      now: storage.clock.now,
      poison: (received, reason) => queue.sendToPoison(received, reason),
      reconcile: (ref, trigger) => runner.joined(ref, trigger),
    }).finally(done);
  };
}

/** The Event Grid trigger's entry: the handler in a span that names the event, its outcome counted. */
function eventEntry(
  config: Config,
  storage: ReturnType<typeof storageOf>,
  clock: Clock,
  requestIds: RequestIds,
  ready: () => Promise<void>,
): Services["handleResourceEvent"] {
  const contendedWakes = new ContendedWakes();
  return async (raw) => {
    await ready();
    // The event's span names ARM's correlationId and the writer's client request id (ours, for our own writes):
    // the reconcile it enqueues continues this trace, and either id finds the write that caused it.
    return inSpan("poolsync.event", { attributes: eventAttributes(raw) }, async (span) => {
      const outcome = await handleResourceEvent(raw, {
        scopes: config.scopes,
        events: storage.events,
        queue: storage.queue,
        log: storage.log,
        now: clock.now,
        debounceMs: config.eventDebounceMs,
        ours: (id, resourceId) => requestIds.ours(id, resourceId),
        unheld: storage.unheld,
        contendedWakes,
      });
      span.setAttribute("poolsync.event.outcome", outcome);
      recordEventOutcome(outcome);
      return outcome;
    });
  };
}

export function createServices(config: Config, overrides: ServiceOverrides = {}): Services {
  const clock = overrides.clock ?? systemClock;
  const storage = storageOf(config, clock, overrides.log ?? jsonLogger(), overrides);
  const { store, log, queue, declarations, cache, history } = storage;
  const arm = armOf(config, clock, storage.sharedTable, overrides);
  const { compute, network, requestIds } = arm;
  const processDeps = processDepsOf(config, clock, log, arm, overrides);
  const pools = poolsOf(config, processDeps, store);
  const inHand = new MessagesInHand(clock, config.declareWindowMs);
  const runner = runnerOf(config, processDeps, pools, storage, arm.pacer, inHand, overrides.timeScale ?? 1);
  const batcher = new IntakeBatcher(
    { declareBatch: (ref, batch, window) => declareTarget(store, ref, batch, window) },
    { queue, windowMs: config.declareWindowMs, log },
  );
  const ready = readyOnce(storage);
  const services: Services = {
    config,
    clock,
    log,
    compute,
    network,
    store,
    declarations,
    cache,
    problems: storage.problems,
    timerState: storage.timerState,
    unheld: storage.unheld,
    censusSummary: storage.censusSummary,
    queue,
    drifts: storage.drifts,
    history,
    plan: (ref, extra) =>
      planTarget(
        ref,
        { compute, network, declarations, cache, clock, config, poolKinds: pools.kinds, gatewayClaims: pools.claims },
        extra,
      ),
    coalescer: runner.coalescer,
    declare: (req) => batcher.declare({ ...req, runsLeading: false, busy: false }),
    previewDeclare: async (ref, d) =>
      (await declareTarget(store, ref, [{ declaration: d, claimant: d.requestId }], undefined, undefined, true))
        .results[0]!,
    ready,
    reconcile: (ref, trigger) => runner.run(ref, trigger),
    handleQueueMessage: queueEntry(config, storage, { inHand, ready, batcher, runner }),
    handleResourceEvent: eventEntry(config, storage, clock, requestIds, ready),
    async reconcileStale() {
      await ready();
      const { timerState } = storage;
      const attempts = { list: () => store.listAttempts() };
      const refresh = () =>
        reconcileStale({ compute, cache, timerState, declarations, queue, attempts, clock, log, config });
      return timerRun({ ...storage, refresh, readPacer: arm.readPacer, clock, log, config });
    },
  };
  return services;
}

let shared: Services | undefined;

/** The process-wide instance the function files use; settings are read and validated on first use. */
export function services(): Services {
  shared ??= createServices(loadConfig(process.env));
  return shared;
}
