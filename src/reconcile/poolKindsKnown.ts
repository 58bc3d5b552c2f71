import type { Logger, NetworkPort } from "../core/ports";
import type { BackendPoolRef } from "../core/resourceIds";
import { describeError } from "../core/errors";

/**
 * Which load balancer backend pools are IP-based (issue 43), found out from the pool itself and kept by this
 * process: a pool's kind, once its first member or its `syncMode` decided it, does not change while it has members,
 * so one GET per pool and process serves every later pass (`ttlMs` bounds it for a pool emptied and reused). A pool
 * that says nothing yet (empty, no syncMode) is not kept: it is NIC-based as before issue 43 until it says otherwise.
 */
export class PoolKindsKnown {
  private readonly known = new Map<string, { ipBased: boolean; at: number }>();
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
    if (pool.poolKind !== "loadBalancerBackendPool") return false;
    const held = this.known.get(pool.key);
    if (held && this.now() - held.at < this.ttlMs) return held.ipBased;
    let asked = this.asking.get(pool.key);
    if (!asked) {
      asked = network
        .getBackendPool(pool)
        .then((p) => {
          if (p.ipBased !== undefined) this.known.set(pool.key, { ipBased: p.ipBased, at: this.now() });
          return p.ipBased;
        })
        .catch((err: unknown) => {
          // The NIC path will meet the same trouble and say it on the declaration.
          log.warn("pool.kind-unknown", { poolId: pool.id, error: describeError(err) });
          return undefined;
        })
        .finally(() => this.asking.delete(pool.key));
      this.asking.set(pool.key, asked);
    }
    return asked;
  }

  /** A pass saw the pool's kind itself (its write's answer). */
  learn(pool: BackendPoolRef, ipBased: boolean | undefined): void {
    if (ipBased !== undefined) this.known.set(pool.key, { ipBased, at: this.now() });
  }
}
