import {
  ConflictError,
  NotFoundError,
  PreconditionFailedError,
  RefusedError,
  ThrottledError,
  throttledByArm,
  TransientError,
} from "../core/errors";
import { fitToPool, planAddresses, type Contribution } from "../core/ipPoolAddresses";
import {
  nameClaimed,
  namedAsSent,
  recordClaims,
  type GatewayClaim,
  type GatewayDoubt,
} from "../core/gatewayPoolAddresses";
import type { BackendPoolModel, PoolAddress } from "../core/models";
import type { Logger, NetworkPort } from "../core/ports";
import type { BackendPoolRef, NicRef } from "../core/resourceIds";
import { ifMatchWrite, type IfMatchDeps } from "./ifMatchWrite";
import type { LeaseGuard } from "./leaseGuard";
import type { ComeBack } from "./passResult";
import type { WriteDoubts } from "../core/control";
import type { PassEvents } from "../core/history";

/**
 * The writes of IP-based load balancer pools (issue 43), one pool at a time per process and coalesced across
 * targets: the passes of every target declared into one pool hand in their share (`submit`), and one read of the
 * pool and one PUT with If-Match on its load balancer's ETag write them all, through the one If-Match loop. A share
 * handed in while a write runs joins the next; a fresh batch gathers until no share came for `gatherMs` (at most
 * `maxGatherMs`), so a burst of declarations on one pool makes one pool write. Across processes the ETag keeps it
 * correct (412: re-read, recompute), this keeps it cheap.
 */

/** One target's share of a pool write. */
export interface PoolShare {
  /** The target's key: a later share of the same target replaces its earlier one in a batch not yet written. */
  targetKey: string;
  contributions: Contribution[];
  /** The pass's lease: a share whose lease lapsed is left out of the write (its pass stops and comes back). */
  lease?: Pick<LeaseGuard, "ensureHeld">;
  /** The pass's own logger: the write's `arm.write` line goes to each target it served. */
  log: Logger;
  /** The pass's events: the write goes into the history of each target it served. */
  events?: PassEvents;
  /** The pass's writes in doubt: a pool write whose answer never came is recorded with every pass it served. */
  doubts?: Pick<WriteDoubts, "record">;
  /**
   * An Application Gateway pool's addresses carry no name: the ones this target added, as its record holds them
   * (core/gatewayPoolAddresses.ts). The addresses read are named by them; an address no claim names is another's.
   */
  claimed?: readonly GatewayClaim[];
  /** The target's gateway write whose answer never came: its claims count once the pool shows it landed. */
  doubt?: GatewayDoubt;
  /** Called when a gateway PUT's answer never came (it may land): the pass records what it sent. */
  gatewayWriteInDoubt?: (addresses: readonly PoolAddress[], ifMatch: string) => Promise<void>;
  /**
   * Called with the addresses about to be sent, before each PUT of an Application Gateway pool: the pass drops from
   * its record the claims the write removes (core/gatewayPoolAddresses.ts). A failure sends nothing.
   */
  beforeGatewayWrite?: (addresses: readonly PoolAddress[]) => Promise<void>;
  /** The gateway refused the write (412, 409, 429): the claims beforeGatewayWrite dropped are given back. */
  gatewayWriteRefused?: () => Promise<void>;
}

export interface PoolWriteResult {
  /** The pool as ARM answered the write, or as read when nothing needed writing: ARM's word, this pass. */
  model: BackendPoolModel;
  /** The pool as read before the write (drift is judged on it). */
  before: BackendPoolModel;
  wrote: boolean;
  /** The batch's ARM calls, reported by the one share that led it (so a report's sum counts each call once). */
  calls: { reads: number; writes: number; preconditionFailures: number; throttles: number } | undefined;
}

export interface PoolWritesDeps extends Omit<IfMatchDeps, "lease" | "log"> {
  network: NetworkPort;
  log: Logger;
  gatherMs: number;
  maxGatherMs: number;
}

/** A share's answer: the write's, or when its pass comes back (its lease lapsed, or the write came back). */
export type PoolShareAnswer = PoolWriteResult | { comeBack: ComeBack };

interface Waiting {
  share: PoolShare;
  settle: { resolve: (r: PoolShareAnswer) => void; reject: (e: unknown) => void }[];
}

interface Batch {
  shares: Map<string, Waiting>;
  firstAt: number;
  lastAt: number;
}

interface PoolQueue {
  running: Promise<void> | undefined;
  next: Batch | undefined;
}

export class PoolWrites {
  private readonly pools = new Map<string, PoolQueue>();

  constructor(private readonly deps: PoolWritesDeps) {}

  submit(pool: BackendPoolRef, share: PoolShare): Promise<PoolShareAnswer> {
    const now = this.deps.clock.now();
    let q = this.pools.get(pool.key);
    if (!q) this.pools.set(pool.key, (q = { running: undefined, next: undefined }));
    const fresh = !q.next;
    const batch = (q.next ??= { shares: new Map(), firstAt: now, lastAt: now });
    batch.lastAt = now;
    return new Promise<PoolShareAnswer>((resolve, reject) => {
      const held = batch.shares.get(share.targetKey);
      batch.shares.set(share.targetKey, { share, settle: [...(held?.settle ?? []), { resolve, reject }] });
      if (fresh) void this.schedule(pool, q, batch);
    });
  }

  /** Nothing runs or waits (for draining at shutdown). */
  get idle(): boolean {
    return this.pools.size === 0;
  }

  private async schedule(pool: BackendPoolRef, q: PoolQueue, batch: Batch): Promise<void> {
    while (q.running) await q.running;
    const { clock, gatherMs, maxGatherMs } = this.deps;
    for (;;) {
      const now = clock.now();
      const wait = Math.min(batch.lastAt + gatherMs, batch.firstAt + maxGatherMs) - now;
      if (wait <= 0) break;
      await clock.sleep(wait);
    }
    if (q.next === batch) q.next = undefined;
    const run = this.run(pool, batch);
    q.running = run;
    await run;
    q.running = undefined;
    if (!q.next) this.pools.delete(pool.key);
  }

  private async run(pool: BackendPoolRef, batch: Batch): Promise<void> {
    // A share whose pass lost its lease writes nothing: another pass of its target may have decided otherwise since.
    const live: Waiting[] = [];
    for (const w of batch.shares.values()) {
      try {
        const lapsed = await w.share.lease?.ensureHeld();
        if (lapsed) w.settle.forEach((s) => s.resolve({ comeBack: lapsed }));
        else live.push(w);
      } catch (err) {
        w.settle.forEach((s) => s.reject(err));
      }
    }
    if (live.length === 0) return;
    const calls = { reads: 0, writes: 0, preconditionFailures: 0, throttles: 0 };
    try {
      const result = await this.write(pool, live, calls);
      live.forEach((w, i) =>
        w.settle.forEach((s) =>
          s.resolve("comeBack" in result ? result : { ...result, calls: i === 0 ? calls : undefined }),
        ),
      );
    } catch (err) {
      live.forEach((w) => w.settle.forEach((s) => s.reject(err)));
    }
  }

  /** Long: one pool write: the read, the kind check, the If-Match loop and the fan-out to every share it served. */
  private async write(
    pool: BackendPoolRef,
    live: Waiting[],
    calls: NonNullable<PoolWriteResult["calls"]>,
  ): Promise<Omit<PoolWriteResult, "calls"> | { comeBack: ComeBack }> {
    const { network } = this.deps;
    const contributions = live.flatMap((w) => w.share.contributions);
    const counted = async <T>(kind: "reads" | "writes", call: () => Promise<T>): Promise<T> => {
      calls[kind]++;
      try {
        return await call();
      } catch (err) {
        if (err instanceof PreconditionFailedError) calls.preconditionFailures++;
        if (throttledByArm(err)) calls.throttles++;
        throw err;
      }
    };
    // A gateway pool's addresses have no names: the claims of the targets served name theirs.
    const named = (m: BackendPoolModel): BackendPoolModel => {
      if (!m.gateway) return m;
      const claims = live.flatMap((w) =>
        recordClaims({ claims: [...(w.share.claimed ?? [])], doubt: w.share.doubt }, m),
      );
      return { ...m, addresses: nameClaimed(m.addresses, claims) };
    };
    const read = async () => {
      try {
        return named(await counted("reads", () => network.getBackendPool(pool)));
      } catch (err) {
        // The pool gone is the declaration's problem, not its target's (a 404 here must not read "target deleted").
        if (err instanceof NotFoundError) throw new RefusedError(`backend pool ${pool.id} does not exist`);
        throw err;
      }
    };
    const before = await read();
    if (before.ipBased === false)
      throw new RefusedError(`backend pool ${pool.id} is NIC-based now: its members join through ip configurations`);
    // Every target served hears of the write in its own history.
    const log = fanOut([this.deps.log, ...live.map((w) => w.share.log)]);
    const paced: NicRef = {
      kind: "nic",
      id: pool.id,
      key: pool.key,
      subscriptionId: pool.subscriptionId,
      resourceGroup: pool.resourceGroup,
      name: pool.name,
    };
    const result = await ifMatchWrite<BackendPoolModel, PoolAddress[]>(
      {
        // Network RP publishes no per-resource write budget: ARM's subscription budget is the one known (as for NICs).
        paced,
        id: pool.id,
        resourceKind: "pool",
        logFields: { poolId: pool.id, target: "pool", nicId: pool.id },
        plan: (current) => {
          const edit = planAddresses(
            current.addresses,
            contributions.map((c) => fitToPool(c, current)),
          );
          return edit ? { edit, pools: addressChanges(current.addresses, edit) } : undefined;
        },
        write: async (current, addresses, opts) => {
          if (current.gateway) for (const w of live) await w.share.beforeGatewayWrite?.(addresses);
          let written: BackendPoolModel;
          try {
            written = await counted("writes", () => network.writeBackendPool(pool, current, addresses, opts));
          } catch (err) {
            // No answer: the write may still land with addresses of ours that no claim names (ifMatchWrite records
            // the doubt that holds finishes back; the record keeps what the write sent).
            if (current.gateway && err instanceof TransientError)
              for (const w of live) await w.share.gatewayWriteInDoubt?.(addresses, current.etag);
            // The gateway answered no: nothing landed, and the claims dropped before the write are ours again.
            if (current.gateway && refusedByGateway(err)) for (const w of live) await w.share.gatewayWriteRefused?.();
            throw err;
          }
          return written.gateway ? { ...written, addresses: namedAsSent(written.addresses, addresses) } : written;
        },
        read,
        row: NO_ROW,
      },
      before,
      {
        ...this.deps,
        log,
        doubts: { record: (d) => live.forEach((w) => w.share.doubts?.record(d)) },
        events: { emit: (e) => live.forEach((w) => w.share.events?.emit(e)) },
      },
    );
    if (result.kind === "gone") throw new RefusedError(`backend pool ${pool.id} does not exist`);
    if (result.kind === "come-back") return { comeBack: result.comeBack };
    return { model: result.model, before, wrote: result.kind === "written" };
  }
}

/**
 * An answer to the PUT itself that says it was not taken. A failed operation or poll says nothing of the kind (the
 * operation poller turns those into TransientError or FatalError), so neither gives claims back.
 */
const refusedByGateway = (err: unknown): boolean =>
  err instanceof PreconditionFailedError || err instanceof ThrottledError || err instanceof ConflictError;

/** Pools are not cached: every batch reads its pool, so what it finishes rests on ARM's word. */
const NO_ROW = {
  beginWrite: () => Promise.resolve(undefined),
  markStale: () => Promise.resolve(undefined),
  store: () => Promise.resolve(),
  evict: () => Promise.resolve(),
};

/** "present:<ip> (<name>)" / "absent:…" per address the write adds or removes, as the history shows a write. */
function addressChanges(before: readonly PoolAddress[], after: readonly PoolAddress[]): string[] {
  const names = (list: readonly PoolAddress[]) => new Set(list.map((a) => a.name.toLowerCase()));
  const had = names(before);
  const has = names(after);
  const text = (a: PoolAddress) => `${a.ipAddress ?? "?"} (${a.name})`;
  return [
    ...after.filter((a) => !had.has(a.name.toLowerCase())).map((a) => `present:${text(a)}`),
    ...before.filter((a) => !has.has(a.name.toLowerCase())).map((a) => `absent:${text(a)}`),
  ];
}

/** One line to every pass's logger (each passes it on to the process's), or the process's alone. */
function fanOut(logs: Logger[]): Logger {
  const [process, ...passes] = logs;
  const each =
    (level: keyof Logger) =>
    (event: string, fields: Record<string, unknown>): void => {
      if (passes.length === 0) process?.[level](event, fields);
      for (const l of passes) l[level](event, fields);
    };
  return { info: each("info"), warn: each("warn"), error: each("error") };
}
