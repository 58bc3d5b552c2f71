import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { loadConfig, type Config } from "../config";
import type { Clock, ComputePort, Logger, NetworkPort } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import { ArmCompute } from "../azure/compute";
import { ArmNetwork } from "../azure/network";
import { ReadPacer } from "../azure/readPacing";
import { armCredential, armScope } from "../azure/credentials";
import { CacheRowMac } from "../azure/cacheRowMac";
import { checkedHandover } from "../reconcile/leaseHandover";
import { EtagCacheTable } from "../azure/etagCacheTable";
import { DeclareWindowTable } from "../azure/declareWindowTable";
import { ProblemLogTable } from "../azure/problemLogTable";
import { TimerStateTable } from "../azure/timerStateTable";
import { EventDebounceTable } from "../azure/eventDebounceTable";
import { ReconcileAttemptsTable } from "../azure/reconcileAttemptsTable";
import { MembershipTable } from "../azure/membershipTable";
import { DriftTable } from "../azure/driftTable";
import { UnheldEventTable } from "../azure/unheldEventTable";
import { CensusSummaryTable } from "../azure/censusSummaryTable";
import { recordCensus } from "./recordCensus";
import { LastWriterTable } from "../azure/lastWriterTable";
import { ReconcileLeaseTable } from "../azure/reconcileLeaseTable";
import { learnWriteBudget, type RateLimitObservation } from "../pacing/learnWriteBudget";
import { ensureQueue, ensureTable, queueClient, tableClient, type StoragePolicies } from "../azure/storageClients";
import { StorageWorkQueue } from "../azure/workQueue";
import type { Coalescer } from "../reconcile/coalescer";
import { LEADS_WITH_MESSAGES_IN_HAND, scheduleDeclared, type Scheduled } from "../reconcile/declareWindow";
import { IntakeGauge } from "../reconcile/intakeGauge";
import { WritePacer } from "../pacing/writePacer";
import { SharedWriteBudget } from "../pacing/sharedWriteBudget";
import { SharedBudgetTable } from "../azure/sharedBudgetTable";
import { ReconcileRunner } from "../reconcile/reconcileRunner";
import { reconcileStale, type StaleRunSummary } from "../reconcile/reconcileStale";
import { handleResourceEvent } from "../reconcile/handleResourceEvent";
import type { EventOutcome } from "../reconcile/resourceEvent";
import { handleQueueMessage, type HandleOutcome, type QueueMessageMeta } from "../reconcile/handleQueueMessage";
import { reconcileScaleSet } from "../reconcile/reconcileScaleSet";
import type { ReconcileReport, ReconcileTrigger } from "../reconcile/vocabulary";
import { reconcileVm } from "../reconcile/reconcileVm";
import { historyLog, passHistoryLog } from "../reconcile/historyLog";
import { HistoryTable } from "../azure/historyTable";
import { pruneHistory } from "./pruneHistory";
import { planTarget, type TargetPlan } from "../reconcile/planTarget";
import type { Declaration } from "../core/declarations";
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
  declarations: MembershipTable;
  cache: EtagCacheTable;
  problems: ProblemLogTable;
  /** The timer's memory between runs (its LIST resume point, the last run's reads by kind for the status report). */
  timerState: TimerStateTable;
  unheld: UnheldEventTable;
  /** The timer's full census of the cache, for status views over a cache larger than they scan. */
  censusSummary: CensusSummaryTable;
  queue: StorageWorkQueue;
  /** Each target's timeline: declarations, writes, drifts, failures. */
  history: HistoryTable;
  /** Each declaration's most recent drift, attributed to the writer whose event invalidated the row. */
  drifts: DriftTable;
  /** What a reconcile of the target would write now: reads as the reconcile would, writes nothing. */
  plan(ref: TargetRef, extra?: Declaration): Promise<TargetPlan>;
  coalescer: Coalescer<ReconcileTrigger, ReconcileReport>;
  /** A new declaration of this scale set: open or join its gathered reconcile (or enqueue one, window off). */
  scheduleDeclared(ref: TargetRef, claimant: string, reason: string): Promise<Scheduled>;
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
  /** Simulated seconds per real second of the simulator the clock follows (benchmarks only; default 1). */
  queueTimeScale?: number;
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

export function createServices(config: Config, overrides: ServiceOverrides = {}): Services {
  const clock = overrides.clock ?? systemClock;
  const baseLog = overrides.log ?? jsonLogger();
  // The cache table holds each target's history too: every line that is history is appended to it (see historyLog).
  const history = new HistoryTable(
    tableClient(config.storage, config.cacheTable, overrides.storagePolicies ?? [], config.tableTimeoutMs),
    clock.now,
  );
  const log = historyLog(baseLog, history, clock.now);
  // ARM's read bucket is one per subscription and principal: Compute and Network reads share one pacer.
  const readPacer = config.pacingEnabled ? new ReadPacer(clock, config.pacingMaxWaitMs) : undefined;
  // The write pacer learns every host's spending from ARM's and CRP's answers.
  const compute =
    overrides.compute ??
    armComputeFromConfig(config, clock, readPacer, (o) => {
      if (config.pacingEnabled) learnWriteBudget(pacer, o);
    });
  const network = overrides.network ?? armNetworkFromConfig(config, clock, readPacer);
  const policies = overrides.storagePolicies ?? [];
  const declarations = new MembershipTable(
    tableClient(config.storage, config.membershipsTable, policies, config.tableTimeoutMs),
    clock.now,
  );
  // The cache table holds the model cache and, in partitions of their own, the bookkeeping beside it (a deployment has
  // no other table).
  const cacheTable = tableClient(config.storage, config.cacheTable, policies, config.tableTimeoutMs);
  const problems = new ProblemLogTable(cacheTable);
  const timerState = new TimerStateTable(cacheTable);
  const windows = new DeclareWindowTable(cacheTable, clock.now);
  const debounce = new EventDebounceTable(cacheTable, clock.now);
  const attempts = new ReconcileAttemptsTable(cacheTable);
  const cache = new EtagCacheTable(
    cacheTable,
    config.cacheEnabled,
    clock.now,
    [problems, windows, debounce, attempts],
    (row, reason) =>
      log.warn("cache.unreadable-row", { ...row, reason, outcome: "treated as a miss: re-read from ARM" }),
    new CacheRowMac(config.cacheKey),
  );
  const queue = new StorageWorkQueue(
    queueClient(config.storage, config.queueName),
    queueClient(config.storage, config.poisonQueueName),
    log,
    overrides.queueTimeScale ?? 1,
  );
  /** Queue messages this host has in hand (a burst's backlog holds many; a lone change, one). */
  let messagesInHand = 0;
  /**
   * Declare messages this process is taking in: while they are a backlog (and half a window after), its gathered
   * passes go back to the queue.
   */
  const intake = new IntakeGauge(clock, LEADS_WITH_MESSAGES_IN_HAND, config.declareWindowMs / 2);
  const pacer = new WritePacer(clock.now, config.pacingEnabled);
  // The subscription-wide budgets are reserved in storage before they are spent, so two hosts never spend one token.
  const sharedBudget = config.pacingEnabled
    ? new SharedWriteBudget(new SharedBudgetTable(cacheTable, clock.now), clock.now, randomUUID(), (sub, kind) =>
        pacer.known(sub, kind),
      )
    : undefined;
  const writers = new LastWriterTable(cacheTable, clock.now);
  const unheld = new UnheldEventTable(cacheTable);
  const censusSummary = new CensusSummaryTable(cacheTable);
  const drifts = new DriftTable(cacheTable);
  const reconcileDeps = {
    compute,
    network,
    declarations,
    cache,
    clock,
    log,
    config,
    pacer,
    ...(sharedBudget ? { sharedBudget } : {}),
    newRequestId: randomUUID,
    drift: { writers, drifts },
    ...(overrides.random ? { random: overrides.random } : {}),
  };
  const runner = new ReconcileRunner({
    reconcile: async (ref, trigger) => {
      const passLog = passHistoryLog(log, history, clock.now, ref.id);
      const deps = { ...reconcileDeps, log: passLog };
      try {
        return await (ref.kind === "vm" ? reconcileVm(ref, trigger, deps) : reconcileScaleSet(ref, trigger, deps));
      } finally {
        await passLog.flush();
      }
    },
    // One reconcile of a target at a time across hosts: the lease shares the cache table, in its own partition.
    leases: new ReconcileLeaseTable(cacheTable, clock.now),
    queue,
    attempts,
    problems,
    clock,
    log,
    leaseTtlMs: config.reconcileLeaseMs,
    newHolderId: randomUUID,
    // The lease also hands the scale set's own write budgets (CRP's per-resource buckets) from one holder to the next.
    handover: {
      snapshot: (ref) => JSON.stringify(ref.kind === "scaleSet" ? pacer.snapshot(ref) : {}),
      restore: (text, ref) => pacer.restore(checkedHandover(text, ref, clock.now())),
    },
    gatherMs: config.gatherMs,
    ...(config.declareWindowMs > 0
      ? {
          windowPending: (ref: TargetRef) => windows.windowPending(ref, config.declareWindowMs),
          closeWindow: (ref: TargetRef) => windows.close(ref),
          // Only with the window on: without it a declaration reconciles in its own invocation, gathered, and would
          // wait on the very backlog it belongs to.
          intakeBusy: () => intake.busy(),
        }
      : {}),
  });
  let readyPromise: Promise<void> | undefined;

  const services: Services = {
    config,
    clock,
    log,
    compute,
    network,
    declarations,
    cache,
    problems,
    timerState,
    unheld,
    censusSummary,
    queue,
    drifts,
    history,
    plan: (ref, extra) => planTarget(ref, { compute, network, declarations, cache, clock, config }, extra),
    coalescer: runner.coalescer,
    scheduleDeclared: (ref, claimant, reason) =>
      scheduleDeclared(ref, claimant, reason, { windows, queue, windowMs: config.declareWindowMs }),
    ready() {
      readyPromise ??= Promise.all([
        ensureTable(declarations.table),
        ensureTable(cache.table),
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
        declarations,
        log,
        now: clock.now,
        poison: (received, reason) => queue.sendToPoison(received, reason),
        reconcile: (ref, trigger) => runner.joined(ref, trigger),
        ...(config.declareWindowMs > 0
          ? {
              scheduleDeclared: (ref, claimant, reason) =>
                scheduleDeclared(ref, claimant, reason, {
                  windows,
                  queue,
                  windowMs: config.declareWindowMs,
                  reconcilesLeading: true,
                  busy: (r) => messagesInHand > LEADS_WITH_MESSAGES_IN_HAND || runner.coalescer.busy(r.key),
                }),
            }
          : {}),
      }).finally(done);
    },
    async handleResourceEvent(raw) {
      await services.ready();
      // The event's span names ARM's correlationId and the writer's client request id (ours, for our own writes):
      // the reconcile it enqueues continues this trace, and either id finds the write that caused it.
      return inSpan("poolsync.event", { attributes: eventAttributes(raw) }, async (span) => {
        const outcome = await handleResourceEvent(raw, {
          scopes: config.scopes,
          cache,
          debounce,
          declarations,
          queue,
          log,
          now: clock.now,
          debounceMs: config.eventDebounceMs,
          writers,
          unheld,
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
            const summary = await reconcileStale({
              compute,
              cache,
              timerState,
              declarations,
              queue,
              attempts,
              clock,
              log,
              config,
            });
            await pruneHistory(history, clock, log);
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

/** A declare message as the trigger hands it (parsed JSON); the handler validates it, this only counts it. */
const isDeclareBody = (body: unknown) =>
  typeof body === "object" && body !== null && (body as { kind?: unknown }).kind === "declare";

let shared: Services | undefined;

/** The process-wide instance the function files use; settings are read and validated on first use. */
export function services(): Services {
  shared ??= createServices(loadConfig(process.env));
  return shared;
}
