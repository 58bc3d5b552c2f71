import type { OutcomeKind, StoredDeclaration } from "../core/declarations";
import type {
  CachedPartition,
  ProblemLog,
  TimerState,
  TimerStateStore,
  UnheldEvent,
  UnheldEvents,
  VmNicRows,
} from "../core/ports";
import { parseTargetId, type TargetRef } from "../core/resourceIds";
import { cacheCensus, savedCensusOf, type CacheCensus, type CensusSource, type CensusSummaries } from "./cacheCensus";
import type { DriftStore } from "../core/drift";
import type { TargetHistory } from "../core/history";
import { withDrift } from "./driftView";
import { observeScaleSet, type ScaleSetView } from "./observedState";
import { cachedVmNics } from "./scaleSetView";
import { peekPoison, type PoisonMessage, type QueueStatusSource } from "./poisonMessages";

/**
 * What `GET /api/status` answers: counts over the whole app, then per scale set the declared vs observed view,
 * from Storage alone (no ARM call). Every scan is bounded, and says when it stopped early.
 */

export const OUTCOME_KINDS: readonly OutcomeKind[] = [
  "pending",
  "applied",
  "failed",
  "refused",
  "target-deleted",
  "target-deleting",
];

export interface RecentProblem {
  scaleSetId: string;
  backendPoolId?: string;
  instanceId?: string;
  at: string;
  reason: string;
}

export interface StatusReport {
  generatedAt: string;
  declarations: {
    total: number;
    byOutcome: Record<OutcomeKind, number>;
    byState: { present: number; absent: number };
    truncated: boolean;
  };
  cache: Omit<CacheCensus, "staleEntries">;
  staleEntries: CacheCensus["staleEntries"];
  queue: { name: string; depth: number; poisonName: string; poison: number };
  /**
   * 412s and throttles that left a trace in Storage: outcomes that name them, cache rows a 412 invalidated. A 412
   * that the reconcile's own re-read resolved leaves none (it is in the logs as arm.write with outcome 412).
   */
  recent: { preconditionFailures: RecentProblem[]; throttles: RecentProblem[]; instanceFailures?: RecentProblem[] };
  scaleSets: ScaleSetView[];
  /** More scale sets have declarations than the report shows. */
  scaleSetsTruncated: boolean;
  poison?: PoisonMessage[];
  /**
   * The timer's last run that read ARM: its requests by kind (LIST pages of resource groups, scale set GETs, VM LISTs);
   * and the subscriptions whose reads it has paused (a 429 or a spent window), until when.
   */
  timer?: {
    lastRun?: NonNullable<TimerState["lastRun"]> & { atIso: string };
    paused?: Array<{ subscriptionId: string; until: string }>;
  };
  /**
   * ARM events about resources poolsync holds nothing for (no declaration, no cache row): counted here instead of
   * leaving a row each; the newest first. They show that Event Grid delivers.
   */
  events?: { unheld: number; recent: UnheldEvent[] };
}

export interface StatusDeps {
  declarations: { listAll(): AsyncIterable<StoredDeclaration> };
  cache: CensusSource & {
    readonly enabled: boolean;
    readPartition(ref: TargetRef): Promise<CachedPartition>;
  } & Partial<VmNicRows>;
  problems: Pick<ProblemLog, "list">;
  queue: QueueStatusSource;
  now: () => number;
  cacheTtlMs: number;
  timerState?: Pick<TimerStateStore, "read">;
  /** Each declaration's most recent drift (absent: none shown). */
  drifts?: Pick<DriftStore, "listForTarget">;
  /** Each target's last history entries (absent: none shown). */
  history?: Pick<TargetHistory, "page">;
  /** The tally of events about resources poolsync holds nothing for (absent: not shown). */
  events?: Pick<UnheldEvents, "summary">;
  /** The timer's last full census: shown when the cache holds more rows than a view scans. */
  censusSummary?: CensusSummaries;
}

export interface StatusOptions {
  /** Only this scale set's view (the counts stay global). */
  scaleSet?: TargetRef;
  includePoison?: boolean;
  maxDeclarations?: number;
  maxScaleSets?: number;
  /** The most cache rows a view scans itself (default VIEW_CENSUS_MAX_ROWS); past it, the timer's census is shown. */
  maxCensusRows?: number;
}

/** Two pages of Table's 1000 rows, and one row of a third that says there are more: a view's scan stays bounded. */
export const VIEW_CENSUS_MAX_ROWS = 2000;

/**
 * The view's own census while the cache is small; past its row limit the timer's full census (with its time), or,
 * before any timer run has saved one, the partial scan marked truncated.
 */
async function boundedCensus(deps: StatusDeps, now: number, maxRows: number): Promise<CacheCensus> {
  const live = await cacheCensus(deps.cache, { enabled: deps.cache.enabled, now, ttlMs: deps.cacheTtlMs, maxRows });
  if (!live.truncated || !deps.censusSummary) return live;
  const saved = savedCensusOf(
    await deps.censusSummary.read().catch((err: { statusCode?: number }) => {
      if (err.statusCode === 404) return undefined;
      throw err;
    }),
  );
  return saved ? { ...saved.census, asOf: new Date(saved.at).toISOString() } : live;
}

const PRECONDITION = /precondition|\b412\b/i;
const THROTTLE = /throttl|\b429\b|too many requests/i;

/**
 * Long: the status report's reads run in parallel and meet in one object; each part's shaping is a function of its own.
 */
export async function statusReport(deps: StatusDeps, opts: StatusOptions = {}): Promise<StatusReport> {
  const now = deps.now();
  const maxDeclarations = opts.maxDeclarations ?? 10_000;
  const maxScaleSets = opts.maxScaleSets ?? 50;
  const byOutcome = Object.fromEntries(OUTCOME_KINDS.map((k) => [k, 0])) as Record<OutcomeKind, number>;
  const byState = { present: 0, absent: 0 };
  const groups = new Map<string, { ref: TargetRef; declarations: StoredDeclaration[] }>();
  const instanceFailures: RecentProblem[] = [];
  const recent: StatusReport["recent"] = { preconditionFailures: [], throttles: [], instanceFailures };
  let total = 0;
  let truncated = false;

  const [census, depth, poisonDepth, poison, problems, timer, events] = await Promise.all([
    boundedCensus(deps, now, opts.maxCensusRows ?? VIEW_CENSUS_MAX_ROWS),
    deps.queue.depth(),
    deps.queue.poisonDepth(),
    opts.includePoison ? peekPoison(deps.queue) : Promise.resolve(undefined),
    deps.problems.list().catch((err: { statusCode?: number }) => {
      if (err.statusCode === 404) return [];
      throw err;
    }),
    deps.timerState?.read().catch((err: { statusCode?: number }) => {
      if (err.statusCode === 404) return undefined;
      throw err;
    }),
    deps.events?.summary().catch((err: { statusCode?: number }) => {
      if (err.statusCode === 404) return undefined;
      throw err;
    }),
    (async () => {
      try {
        for await (const d of deps.declarations.listAll()) {
          if (total >= maxDeclarations) {
            truncated = true;
            break;
          }
          total++;
          byOutcome[d.outcome.kind] = (byOutcome[d.outcome.kind] ?? 0) + 1;
          byState[d.state]++;
          const reason = d.outcome.reason ?? "";
          const trace = { scaleSetId: d.scaleSetId, backendPoolId: d.backendPoolId, at: d.outcome.at, reason };
          if (PRECONDITION.test(reason)) recent.preconditionFailures.push(trace);
          if (THROTTLE.test(reason)) recent.throttles.push(trace);
          const ref = parseTargetId(d.scaleSetId);
          if (!ref.ok) continue;
          const group = groups.get(ref.value.key) ?? { ref: ref.value, declarations: [] };
          group.declarations.push(d);
          groups.set(ref.value.key, group);
        }
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode !== 404) throw err;
      }
    })(),
  ]);

  // Each scale set's last reconcile that met a 412 or a throttle, as the reconcile recorded it.
  for (const p of problems) {
    const detail = `${p.result}: ${p.reason}`;
    if (p.preconditionFailures > 0)
      recent.preconditionFailures.push({
        scaleSetId: p.scaleSetId,
        at: p.at,
        reason: `${p.preconditionFailures} × 412 · ${detail}`,
      });
    if (p.throttles > 0 || THROTTLE.test(p.reason))
      recent.throttles.push({ scaleSetId: p.scaleSetId, at: p.at, reason: detail });
    for (const f of p.instanceFailures ?? [])
      instanceFailures.push({ scaleSetId: p.scaleSetId, instanceId: f.instanceId, at: p.at, reason: f.reason });
  }
  for (const e of census.staleEntries) {
    if (PRECONDITION.test(e.reason))
      recent.preconditionFailures.push({
        scaleSetId: e.scaleSetId,
        ...(e.instanceId ? { instanceId: e.instanceId } : {}),
        at: e.since,
        reason: e.reason,
      });
  }
  const newestFirst = (a: RecentProblem, b: RecentProblem) => b.at.localeCompare(a.at);
  recent.preconditionFailures.sort(newestFirst).splice(50);
  recent.throttles.sort(newestFirst).splice(50);
  instanceFailures.sort(newestFirst).splice(50);

  let chosen = [...groups.values()].sort((a, b) => a.ref.key.localeCompare(b.ref.key));
  if (opts.scaleSet) chosen = [groups.get(opts.scaleSet.key) ?? { ref: opts.scaleSet, declarations: [] }];
  const scaleSetsTruncated = chosen.length > maxScaleSets;
  chosen = chosen.slice(0, maxScaleSets);
  const scaleSets = await Promise.all(
    chosen.map(async (g) => {
      const partition = await deps.cache.readPartition(g.ref);
      const view = observeScaleSet(
        g.ref.id,
        g.declarations,
        partition,
        { now, ttlMs: deps.cacheTtlMs, cacheEnabled: deps.cache.enabled },
        await cachedVmNics(g.ref, partition, deps.cache),
      );
      const drifted = deps.drifts ? withDrift(view, await deps.drifts.listForTarget(g.ref)) : view;
      return deps.history ? { ...drifted, history: (await deps.history.page(g.ref.id, 8)).entries } : drifted;
    }),
  );

  const { staleEntries, ...cache } = census;
  return {
    generatedAt: new Date(now).toISOString(),
    declarations: { total, byOutcome, byState, truncated },
    cache,
    staleEntries,
    queue: { name: deps.queue.name, depth, poisonName: deps.queue.poisonName, poison: poisonDepth },
    recent,
    scaleSets,
    scaleSetsTruncated,
    ...(poison ? { poison } : {}),
    ...timerOf(timer, now),
    ...(events ? { events: { unheld: events.count, recent: events.recent } } : {}),
  };
}

/** The timer's part of the report: absent until a run has read ARM or paused a subscription. */
function timerOf(state: TimerState | undefined, now: number): Pick<StatusReport, "timer"> {
  const paused = Object.entries(state?.paused ?? {})
    .filter(([, until]) => until > now)
    .sort((a, b) => a[1] - b[1])
    .map(([subscriptionId, until]) => ({ subscriptionId, until: new Date(until).toISOString() }));
  if (!state?.lastRun && paused.length === 0) return {};
  return {
    timer: {
      ...(state?.lastRun ? { lastRun: { ...state.lastRun, atIso: new Date(state.lastRun.at).toISOString() } } : {}),
      ...(paused.length > 0 ? { paused } : {}),
    },
  };
}
