import type { Logger, NetworkPort } from "../core/ports";
import type { BackendPoolRef } from "../core/resourceIds";
import { describeError, PoolsyncError } from "../core/errors";
import { mapLimit } from "../core/retryPolicy";

/**
 * Pools whose kind one pass reads at once. A pass over a burst's declarations on fifty pools read them one after the
 * other, ten seconds at a GET's real latency before its first write; eight at a time keeps to a small share of ARM's
 * read bucket (250) and NRP's (10,000 in 5 minutes).
 */
export const POOL_KIND_READS_AT_ONCE = 8;

/**
 * Which load balancer backend pools are IP-based, and which Application Gateway pools list addresses (issue 43),
 * found out from the pool itself and kept by this process: a pool's kind, once its first member or its `syncMode`
 * decided it, does not change while it has members (a gateway pool may list both: an ip configuration joined to it
 * makes it NIC-based, as a classic load balancer pool's does), so one GET per pool and process serves every later pass and plan (`ttlMs` bounds it for a pool emptied and reused).
 * A pool that says nothing yet (empty, no syncMode) is NIC-based as before issue 43, and kept so too: the first ip
 * configuration poolsync joins to it decides it. One another writer makes IP-based meanwhile is found at the next
 * look after `ttlMs` (until then, NRP refuses the NIC write and the declaration fails with its reason, retried).
 */
export class PoolKindsKnown {
  private readonly known = new Map<string, { ipBased: boolean | undefined; at: number }>();
  private readonly asking = new Map<string, Promise<boolean | undefined>>();

  constructor(
    private readonly now: () => number,
    private readonly ttlMs: number,
  ) {}

  /** true: IP-based; false: NIC-based; undefined: not known (nothing says yet, or the read failed: logged). */
  async ipBased(
    pool: BackendPoolRef,
    network: Pick<NetworkPort, "getBackendPool">,
    log: Logger,
  ): Promise<boolean | undefined> {
    if (pool.poolKind === "inboundNatPool") return false;
    const held = this.cached(pool);
    if (held.hit) return held.ipBased;
    let asked = this.asking.get(pool.key);
    if (!asked) {
      asked = network
        .getBackendPool(pool)
        .then((p) => {
          this.learn(pool, p.ipBased);
          return p.ipBased;
        })
        .catch((err: unknown) => {
          // The NIC path will meet the same trouble and say it on the declaration.
          log.warn("pool.kind-unknown", { poolId: pool.id, error: describeError(err) });
          // A read the role does not grant (the gateway read is opt-in) is not asked again every pass.
          if (err instanceof PoolsyncError && err.status === 403) this.learn(pool, undefined);
          return undefined;
        })
        .finally(() => this.asking.delete(pool.key));
      this.asking.set(pool.key, asked);
    }
    return asked;
  }

  /** `ipBased` of each pool (by `key`), each distinct pool asked once, up to POOL_KIND_READS_AT_ONCE reads at a time. */
  async ipBasedOfEach(
    pools: readonly BackendPoolRef[],
    network: Pick<NetworkPort, "getBackendPool">,
    log: Logger,
  ): Promise<Map<string, boolean | undefined>> {
    const distinct = [...new Map(pools.map((p) => [p.key, p])).values()];
    const kinds = new Map<string, boolean | undefined>();
    await mapLimit(distinct, POOL_KIND_READS_AT_ONCE, async (pool) => {
      kinds.set(pool.key, await this.ipBased(pool, network, log));
    });
    return kinds;
  }

  /** What the pool said when last read, while that is fresh; `hit` false when it must be read. */
  cached(pool: BackendPoolRef): { hit: boolean; ipBased: boolean | undefined } {
    const held = this.known.get(pool.key);
    return held && this.now() - held.at < this.ttlMs
      ? { hit: true, ipBased: held.ipBased }
      : { hit: false, ipBased: undefined };
  }

  /** The pool as just read (by a pass, a plan or a pool write). */
  learn(pool: BackendPoolRef, ipBased: boolean | undefined): void {
    this.known.set(pool.key, { ipBased, at: this.now() });
    // Bounded: one entry per pool ever declared, swept of the expired when it grows.
    if (this.known.size > 4_096)
      for (const [key, v] of this.known) if (this.now() - v.at >= this.ttlMs) this.known.delete(key);
  }
}
