// The benchmark's count of poolsync's Table round trips, in a module of its own: an instance process
// (bench/hostProcess.ts) loads it without the simulator and the workloads that bench/poolsyncRun.ts brings along.
import { AsyncLocalStorage } from "node:async_hooks";
import type { PipelinePolicy, PipelineRequest } from "@azure/core-rest-pipeline";

/** Set while the benchmark hands an ARM event to a host, so that the event's own Table work can be told apart. */
const eventPhase = new AsyncLocalStorage<boolean>();

/** Runs `work` as an ARM event's handling: its Table round trips count as the event's (TableCounter.eventOps). */
export const inEventPhase = <T>(work: () => Promise<T>): Promise<T> => eventPhase.run(true, work);

/**
 * Counts the Table round trips of every Table client of every host (a batch transaction is one): given to
 * createServices as a storage policy, so the targets table and the shared table are both counted, once each. Writes
 * (every request but a GET) are also counted by the partition they name, to see which partitions a workload loads.
 */
export class TableCounter {
  ops = 0;
  /** Of `ops`, those made while handling an ARM event (its own work, not the reconcile it may wake). */
  eventOps = 0;
  readonly byMethod: Record<string, number> = {};
  readonly partitionWrites = new Map<string, number>();
  readonly policy: PipelinePolicy = {
    name: "benchTableCounter",
    sendRequest: (req, next) => {
      const url = new URL(req.url);
      // The same policies reach the queue clients: only the Table endpoint's requests are counted.
      if (url.host !== this.tableHost) return next(req);
      this.ops++;
      if (eventPhase.getStore() === true) this.eventOps++;
      const table = /^\/[^/]+\/([A-Za-z0-9]+)/.exec(url.pathname)?.[1] ?? "?";
      this.byMethod[`${table} ${req.method}`] = (this.byMethod[`${table} ${req.method}`] ?? 0) + 1;
      if (req.method !== "GET") {
        const pk = partitionOf(req);
        this.partitionWrites.set(pk, (this.partitionWrites.get(pk) ?? 0) + 1);
      }
      return next(req);
    },
  };
  private readonly tableHost: string;
  /** `storage`: the connection string whose TableEndpoint the app uses. */
  constructor(storage: string) {
    const endpoint = /TableEndpoint=([^;]+)/.exec(storage)?.[1];
    if (!endpoint) throw new Error("the benchmark's storage connection string names no TableEndpoint");
    this.tableHost = new URL(endpoint).host;
  }
  reset(): void {
    this.ops = 0;
    this.eventOps = 0;
    this.partitionWrites.clear();
    for (const k of Object.keys(this.byMethod)) delete this.byMethod[k];
  }
}

/** The partition a Table write names: in its URL's key, or the body's first PartitionKey (an insert, a batch). */
function partitionOf(req: PipelineRequest): string {
  const inUrl = /PartitionKey='([^']*)'/.exec(decodeURIComponent(new URL(req.url).pathname));
  if (inUrl) return inUrl[1]!;
  const body = typeof req.body === "string" ? req.body : "";
  return /"PartitionKey":"([^"]*)"/.exec(body)?.[1] ?? /PartitionKey='([^']*)'/.exec(body)?.[1] ?? "?";
}
