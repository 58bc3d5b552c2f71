import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { loadConfig, type Config } from "../config";
import type { Clock, ComputePort, Logger, NetworkPort, ProblemLog, ReconcileProblem } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import { doubtRemainingMs, type ControlBounds, type WriteInDoubt } from "../core/control";
import { ArmCompute } from "../azure/compute";
import { ArmNetwork } from "../azure/network";
import { ReadPacer } from "../azure/readPacing";
import { armCredential, armScope } from "../azure/credentials";
import { CacheRowMac } from "../azure/cacheRowMac";
import { RequestIds } from "../azure/requestIds";
import { ContendedWakes } from "../reconcile/contendedWakes";
import { checkedHandover } from "../reconcile/leaseHandover";
import { ProblemLogTable } from "../azure/problemLogTable";
import { TimerStateTable } from "../azure/timerStateTable";
import { UnheldEventTable } from "../azure/unheldEventTable";
import { CensusSummaryTable } from "../azure/censusSummaryTable";
import { ResourceOwnerTable } from "../azure/resourceOwnerTable";
import { TargetStore } from "../azure/targets/targetStore";
import { TargetDeclarations } from "../azure/targets/targetDeclarations";
import { TargetCache } from "../azure/targets/targetCache";
import { StoreTargetPasses } from "../azure/targets/targetPasses";
import { StoreTargetEvents } from "../azure/targets/targetEvents";
import { TargetHistoryTable } from "../azure/targets/targetHistory";
import { TargetDriftTable } from "../azure/targets/targetDrifts";
import { declareTarget } from "../azure/targets/declareTarget";
import { recordCensus } from "./recordCensus";
import { learnWriteBudget, type RateLimitObservation } from "../pacing/learnWriteBudget";
import { ensureQueue, ensureTable, queueClient, tableClient, type StoragePolicies } from "../azure/storageClients";
import { StorageWorkQueue } from "../azure/workQueue";
import type { Coalescer } from "../reconcile/coalescer";
import { LEADS_WITH_MESSAGES_IN_HAND } from "../reconcile/declareWindow";
import { IntakeBatcher } from "../reconcile/intakeBatch";
import { IntakeGauge } from "../reconcile/intakeGauge";
import { WritePacer } from "../pacing/writePacer";
import { SharedWriteBudget } from "../pacing/sharedWriteBudget";
import { SharedBudgetTable } from "../azure/sharedBudgetTable";
import { ReconcileRunner } from "../reconcile/reconcileRunner";
import { reconcileStale, type StaleRunSummary } from "../reconcile/reconcileStale";
import { handleResourceEvent } from "../reconcile/handleResourceEvent";
import type { EventOutcome } from "../reconcile/resourceEvent";
import { handleQueueMessage, type HandleOutcome, type QueueMessageMeta } from "../reconcile/handleQueueMessage";
import type { ReconcileReport, ReconcileTrigger } from "../reconcile/vocabulary";
import { reconcileTarget } from "../reconcile/reconcileTarget";
import { PoolWrites } from "../reconcile/poolWrites";
import { PoolKindsKnown } from "../reconcile/poolKindsKnown";
import { GatewayClaimTable } from "../azure/targets/gatewayClaimRows";
import { historyLog, passHistoryLog } from "../reconcile/historyLog";
import { pruneHistory } from "./pruneHistory";
import { sweepOldLayout } from "./sweepOldLayout";
import { OldLayoutSweeper } from "../azure/oldLayoutSweep";
import { planTarget, type TargetPlan } from "../reconcile/planTarget";
import type { Declaration } from "../core/declarations";
import type { DeclaredResult } from "../core/targetPasses";
import type { IntakeDeclare } from "../intake/acceptDeclaration";
import { jsonLogger } from "./logger";
import { eventAttributes, recordEventOutcome, timedStaleRun } from "./observe";
import { inSpan } from "../telemetry/tracing";
import { systemClock } from "./systemClock";

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

/** What both ARM edges take from the settings: endpoint, credential, extra CA, timeouts, operation polling. */
export function armEdgeOptions(config: Config, clock: Clock) {
  return {
    endpoint: config.armEndpoint,
    ...(config.armCaFile ? { ca: readFileSync(config.armCaFile, "utf8") } : {}),
    credential: armCredential(config),
    scope: armScope(config.cloud),
    clock,
    requestTimeoutMs: config.armTimeoutMs,
    operationMaxWaitMs: config.operationMaxWaitMs,
    operationPollIntervalMs: config.operationPollMs,
  };
}

/** The Network edge (NICs), on the same endpoint and settings as the Compute edge, sharing its read pacing. */
export function armNetworkFromConfig(config: Config, clock: Clock, readPacer?: ReadPacer): ArmNetwork {
  return new ArmNetwork({ ...armEdgeOptions(config, clock), ...(readPacer ? { readPacer } : {}) });
}

/** The Compute edge as the settings describe it. */
export function armComputeFromConfig(
  config: Config,
  clock: Clock,
  readPacer?: ReadPacer,
  onRateLimit?: (o: RateLimitObservation) => void,
): ArmCompute {
  return new ArmCompute({
    ...armEdgeOptions(config, clock),
    ...(readPacer ? { readPacer } : {}),
    pacing: config.pacingEnabled,
    pacingMaxWaitMs: config.pacingMaxWaitMs,
    ...(onRateLimit ? { onRateLimit } : {}),
  });
}

/** The longest Retry-After poolsync honours: a stored requeue further ahead is not one it made. */
const MAX_REQUEUE_MS = 24 * 3_600_000;

/** The targets table as the settings describe it (also for tools that only read it: the demo, the soak). */
export function targetStoreFromConfig(
  config: Config,
  o: { clock?: Clock; log?: Logger; storagePolicies?: StoragePolicies } = {},
): TargetStore {
  const bounds: ControlBounds = {
    leaseMs: config.reconcileLeaseMs,
    maxRequeueMs: MAX_REQUEUE_MS,
    maxDueMs: Math.max(config.cacheTtlMs, config.failedRetryMs) * 4,
  };
  return new TargetStore(
    tableClient(config.storage, config.membershipsTable, o.storagePolicies ?? [], config.tableTimeoutMs),
    {
      now: (o.clock ?? systemClock).now,
      bounds,
      mac: new CacheRowMac(config.cacheKey),
      cacheEnabled: config.cacheEnabled,
      log: o.log ?? jsonLogger(),
    },
  );
}

export function createServices(config: Config, overrides: ServiceOverrides = {}): Services {
  const clock = overrides.clock ?? systemClock;
  const timeScale = overrides.timeScale ?? 1;
  const writeFlightMs = checkedWriteFlight(config, timeScale);
  const baseLog = overrides.log ?? jsonLogger();
  const policies = overrides.storagePolicies ?? [];
  // Two tables: the targets table (a partition per target: its control row, declarations, cache rows, history, drifts,
  // writers) and the shared one (what is no single target's: the timer's state and index, owners of NICs and VMs, the
  // problem log, the write budgets, the unheld-event tally, the census).
  const store = targetStoreFromConfig(config, { clock, log: baseLog, storagePolicies: policies });
  const targetsTable = store.table;
  const sharedTable = tableClient(config.storage, config.cacheTable, policies, config.tableTimeoutMs);
  const history = new TargetHistoryTable(store);
  const log = historyLog(baseLog, history, clock.now);
  const requestIds = new RequestIds(config.cacheKey);
  // ARM's read bucket is one per subscription and principal: Compute and Network reads share one pacer.
  const readPacer = config.pacingEnabled ? new ReadPacer(clock, config.pacingMaxWaitMs) : undefined;
  // The write pacer learns every host's spending from ARM's and CRP's answers.
  const compute =
    overrides.compute ??
    armComputeFromConfig(config, clock, readPacer, (o) => {
      if (config.pacingEnabled) learnWriteBudget(pacer, o);
    });
  const network = overrides.network ?? armNetworkFromConfig(config, clock, readPacer);
  const owners = new ResourceOwnerTable(sharedTable);
  const declarations = new TargetDeclarations(store);
  const cache = new TargetCache(store, owners);
  const passes = new StoreTargetPasses(store, owners);
  const events = new StoreTargetEvents(store, owners);
  const drifts = new TargetDriftTable(store);
  const problemLog = new ProblemLogTable(sharedTable);
  const oldLayout = new OldLayoutSweeper(sharedTable, targetsTable, clock.now);
  const problems = {
    record: (ref: TargetRef, p: ReconcileProblem) => problemLog.record(ref, p),
    trim: () => problemLog.trim(),
    list: async (max = 200) => {
      const [logged, controls] = await Promise.all([problemLog.list(max), store.listControls()]);
      const last: ReconcileProblem[] = [...controls.values()].flatMap((c) =>
        c.lastProblem
          ? [
              {
                scaleSetId: c.lastProblem.targetId,
                at: new Date(c.lastProblem.at).toISOString(),
                result: c.lastProblem.result,
                preconditionFailures: c.lastProblem.preconditionFailures,
                throttles: c.lastProblem.throttles,
                reason: c.lastProblem.reason,
              },
            ]
          : [],
      );
      // A target's last problem is in its control row; the log keeps passes that ended badly (one per pass, with the
      // instances ARM refused): the log's row stands for a pass both hold.
      const seen = new Set(logged.map((p) => `${p.scaleSetId.toLowerCase()}|${p.at}`));
      const rest = last.filter((p) => !seen.has(`${p.scaleSetId.toLowerCase()}|${p.at}`));
      return [...logged, ...rest].sort((a, b) => b.at.localeCompare(a.at)).slice(0, max);
    },
  };
  const timerState = new TimerStateTable(sharedTable, clock.now);
  const unheld = new UnheldEventTable(sharedTable);
  const contendedWakes = new ContendedWakes();
  const censusSummary = new CensusSummaryTable(sharedTable);
  const queue = new StorageWorkQueue(
    queueClient(config.storage, config.queueName),
    queueClient(config.storage, config.poisonQueueName),
    log,
    timeScale,
  );
  /** Queue messages this host has in hand (a burst's backlog holds many; a lone change, one). */
  let messagesInHand = 0;
  /**
   * Declare messages this process is taking in: while they are a backlog (and half a window after), its gathered
   * passes go back to the queue.
   */
  const intake = new IntakeGauge(clock, LEADS_WITH_MESSAGES_IN_HAND, config.declareWindowMs / 2);
  const lateness = () => readPacer?.latenessMs() ?? 0;
  const pacer = new WritePacer(clock.now, config.pacingEnabled, lateness);
  // The subscription-wide budgets are reserved in storage before they are spent, so two hosts never spend one token.
  const sharedBudget = config.pacingEnabled
    ? new SharedWriteBudget(new SharedBudgetTable(sharedTable, clock.now), clock.now, randomUUID(), {
        armLeft: (sub) => pacer.known(sub),
        counted: (sub, kind, suffix) => pacer.counted(sub, kind, suffix),
        latenessMs: lateness,
      })
    : undefined;
  const reconcileDeps = {
    compute,
    network,
    clock,
    log,
    config,
    pacer,
    ...(sharedBudget ? { sharedBudget } : {}),
    newRequestId: (resourceId: string) => requestIds.next(resourceId),
    ...(overrides.random ? { random: overrides.random } : {}),
  };
  // IP-based pools (issue 43): their kind as each pool says it, and their writes, coalesced across targets.
  const pools = {
    kinds: new PoolKindsKnown(clock.now, config.cacheTtlMs),
    writes: new PoolWrites({
      ...reconcileDeps,
      gatherMs: config.gatherMs,
      // A burst's declarations reach the pool over about a declare window: its pool write waits at most that long.
      maxGatherMs: Math.max(config.gatherMs, config.declareWindowMs),
    }),
    claims: new GatewayClaimTable(store, log),
  };
  const runner = new ReconcileRunner({
    reconcile: async (ref, trigger, lease, open) => {
      // The pass's history goes into its commit; lines about other targets (none) would go at once.
      const passLog = passHistoryLog(log, (entry) => open.recordHistory(entry), clock.now, ref.id);
      const deps = {
        ...reconcileDeps,
        declarations: open.declarations,
        cache: open.cache,
        // Writers are recorded by the events that saw them; a pass only reads them.
        drift: {
          writers: { read: (id: string) => open.writers.read(id), record: () => Promise.resolve() },
          drifts: open.drifts,
        },
        log: passLog,
        lease,
        doubts: {
          record: (d: WriteInDoubt) => open.recordDoubt(d),
          remainingMs: (id: string, etag: string) =>
            doubtRemainingMs(open.control.doubts, id, etag, clock.now(), config.writeDoubtMs),
        },
      };
      return reconcileTarget(ref, trigger, { ...deps, pools });
    },
    passes,
    queue,
    problems,
    clock,
    log,
    leaseTtlMs: config.reconcileLeaseMs,
    writeFlightMs,
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
          intakeBusy: () => intake.busy(),
        }
      : {}),
  });
  const batcher = new IntakeBatcher(
    { declareBatch: (ref, batch, window) => declareTarget(store, ref, batch, window) },
    { queue, windowMs: config.declareWindowMs, log },
  );
  let readyPromise: Promise<void> | undefined;

  const services: Services = {
    config,
    clock,
    log,
    compute,
    network,
    store,
    declarations,
    cache,
    problems,
    timerState,
    unheld,
    censusSummary,
    queue,
    drifts,
    history,
    plan: (ref, extra) =>
      planTarget(
        ref,
        { compute, network, declarations, cache, clock, config, poolKinds: pools.kinds, gatewayClaims: pools.claims },
        extra,
      ),
    coalescer: runner.coalescer,
    declare: (req) => batcher.declare({ ...req, runsLeading: false, busy: false }),
    previewDeclare: async (ref, d) => {
      const out = await declareTarget(
        store,
        ref,
        [{ declaration: d, claimant: d.requestId }],
        undefined,
        undefined,
        true,
      );
      return out.results[0]!;
    },
    ready() {
      readyPromise ??= Promise.all([
        ensureTable(targetsTable),
        ensureTable(sharedTable),
        ensureQueue(queue.queue),
        ensureQueue(queue.poison),
      ]).then(
        () => undefined,
        (err) => {
          readyPromise = undefined; // let the next invocation try again rather than fail forever
          throw err;
        },
      );
      return readyPromise;
    },
    reconcile: (ref, trigger) => runner.run(ref, trigger),
    async handleQueueMessage(body, meta) {
      const declare = isDeclareBody(body);
      messagesInHand++;
      if (declare) intake.took();
      const done = () => {
        messagesInHand--;
        if (declare) intake.left();
      };
      await services.ready().catch((err: unknown) => {
        done();
        throw err;
      });
      return handleQueueMessage(body, meta, {
        scopes: config.scopes,
        bindings: config.bindings,
        declare: (req) => batcher.declare(req),
        windowOn: config.declareWindowMs > 0,
        busy: (r) => messagesInHand > LEADS_WITH_MESSAGES_IN_HAND || runner.coalescer.busy(r.key),
        log,
        now: clock.now,
        poison: (received, reason) => queue.sendToPoison(received, reason),
        reconcile: (ref, trigger) => runner.joined(ref, trigger),
      }).finally(done);
    },
    async handleResourceEvent(raw) {
      await services.ready();
      // The event's span names ARM's correlationId and the writer's client request id (ours, for our own writes):
      // the reconcile it enqueues continues this trace, and either id finds the write that caused it.
      return inSpan("poolsync.event", { attributes: eventAttributes(raw) }, async (span) => {
        const outcome = await handleResourceEvent(raw, {
          scopes: config.scopes,
          events,
          queue,
          log,
          now: clock.now,
          debounceMs: config.eventDebounceMs,
          ours: (id, resourceId) => requestIds.ours(id, resourceId),
          unheld,
          contendedWakes,
        });
        span.setAttribute("poolsync.event.outcome", outcome);
        recordEventOutcome(outcome);
        return outcome;
      });
    },
    async reconcileStale() {
      await services.ready();
      return inSpan("poolsync.timer", {}, () =>
        timedStaleRun(
          async () => {
            const run = () =>
              reconcileStale({
                compute,
                cache,
                timerState,
                declarations,
                queue,
                attempts: { list: () => store.listAttempts() },
                clock,
                log,
                config,
              });
            // The refresh reads in the background: at most half of each of CRP's read windows, the rest stays for
            // the reconciles (a sweep of thousands of scale sets would otherwise spend a window on its own).
            const summary = await (readPacer ? readPacer.background(run) : run());
            await pruneHistory(history, clock, log);
            await sweepOldLayout(oldLayout, log);
            await problems
              .trim()
              .catch((err: unknown) => log.warn("timer.problems-trim-failed", { error: (err as Error).message }));
            await recordCensus(cache, censusSummary, { clock, log, ttlMs: config.cacheTtlMs });
            return summary;
          },
          queue,
          clock,
        ),
      );
    },
  };
  return services;
}

/**
 * The longest a sent ARM write may take to reach ARM, on the app's clock: the request timeout (real time). A pass
 * writes only with that much of its lease left (LeaseGuard), so a lease shorter than two of them would stop every write.
 */
function checkedWriteFlight(config: Config, timeScale: number): number {
  const flightMs = config.armTimeoutMs * timeScale;
  if (config.reconcileLeaseMs < 2 * flightMs)
    throw new Error(
      `POOLSYNC_RECONCILE_LEASE_SECONDS: ${config.reconcileLeaseMs / 1000} s is shorter than twice the ARM request timeout ` +
        `(POOLSYNC_ARM_TIMEOUT_SECONDS, ${flightMs / 1000} s on this clock): a pass writes only with a timeout's worth of lease left`,
    );
  return flightMs;
}

/** A declare message as the trigger hands it (parsed JSON); the handler validates it, this only counts it. */
const isDeclareBody = (body: unknown) =>
  typeof body === "object" && body !== null && (body as { kind?: unknown }).kind === "declare";

let shared: Services | undefined;

/** The process-wide instance the function files use; settings are read and validated on first use. */
export function services(): Services {
  shared ??= createServices(loadConfig(process.env));
  return shared;
}
