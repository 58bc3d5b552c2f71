// Request counters per resource (by canonical lower-case ID) and in total, so tests and benchmarks can assert exact
// ARM call counts. A resource's stats include those of everything under it (a scale set's include its instances').

export interface StatsCounters {
  gets: number;
  lists: number;
  puts: number;
  patches: number;
  deletes: number;
  actions: number;
  instanceGets: number;
  instanceLists: number;
  instancePuts: number;
  instanceDeletes: number;
  operationGets: number;
  networkGets: number;
  nicGets: number;
  nicPuts: number;
  /** Load balancer, backend pool and application gateway writes (PUT) and deletes. */
  networkPuts: number;
  networkDeletes: number;
  vmGets: number;
  vmLists: number;
  status412: number;
  status409: number;
  status429: number;
  /** Every request the simulator answered (or dropped), control endpoints excluded. */
  requests: number;
}

export type RequestKind = Exclude<keyof StatsCounters, "status412" | "status409" | "status429" | "requests">;

export function emptyCounters(): StatsCounters {
  return {
    gets: 0,
    lists: 0,
    puts: 0,
    patches: 0,
    deletes: 0,
    actions: 0,
    instanceGets: 0,
    instanceLists: 0,
    instancePuts: 0,
    instanceDeletes: 0,
    operationGets: 0,
    networkGets: 0,
    nicGets: 0,
    nicPuts: 0,
    networkPuts: 0,
    networkDeletes: 0,
    vmGets: 0,
    vmLists: 0,
    status412: 0,
    status409: 0,
    status429: 0,
    requests: 0,
  };
}

export class Stats {
  private readonly byKey = new Map<string, StatsCounters>();

  private counters(key: string): StatsCounters {
    let c = this.byKey.get(key);
    if (!c) {
      c = emptyCounters();
      this.byKey.set(key, c);
    }
    return c;
  }

  request(kind: RequestKind | undefined, key: string): void {
    const c = this.counters(key);
    c.requests++;
    if (kind) c[kind]++;
  }

  status(status: number, key: string): void {
    const c = this.counters(key);
    if (status === 412) c.status412++;
    else if (status === 409) c.status409++;
    else if (status === 429) c.status429++;
  }

  /** Counters of `id` and everything under it; of everything when `id` is omitted. */
  get(id?: string): StatsCounters {
    const out = emptyCounters();
    const prefix = id?.toLowerCase().replace(/\/+$/, "");
    for (const [key, c] of this.byKey) {
      if (prefix !== undefined && key !== prefix && !key.startsWith(`${prefix}/`)) continue;
      for (const k of Object.keys(out) as (keyof StatsCounters)[]) out[k] += c[k];
    }
    return out;
  }

  reset(): void {
    this.byKey.clear();
  }
}
