import { QueueClient } from "@azure/storage-queue";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { StoreTargetEvents } from "../../src/azure/targets/targetEvents";
import { UnheldEventTable } from "../../src/azure/unheldEventTable";
import { StorageWorkQueue } from "../../src/azure/workQueue";
import { parseScope } from "../../src/core/scopes";
import { ContendedWakes } from "../../src/reconcile/contendedWakes";
import type { EventDeps } from "../../src/reconcile/resourceEvent";
import { targetTableOnAzurite } from "./targetTable";

/**
 * What the ARM event handlers work through, all real: the targets table and the shared table (owners, unheld events)
 * on Azurite, a work queue of the test's own, this host's contended wakes; `ours` holds the client request ids the
 * test says poolsync made.
 */
export async function eventDepsOnAzurite(prefix: string, scope: string, debounceMs = 30_000) {
  const t = await targetTableOnAzurite(prefix);
  const queue = new QueueClient(testStorageConnectionString(), uniqueName(`${prefix}-`));
  await queue.create();
  const parsed = parseScope(scope);
  if (!parsed.ok) throw new Error(`test bug: ${scope} ${parsed.reason}`);
  const ours = new Set<string>();
  const unheld = new UnheldEventTable(t.shared);
  const deps: EventDeps = {
    scopes: [parsed.value],
    events: new StoreTargetEvents(t.store, t.owners),
    queue: new StorageWorkQueue(queue, queue, t.log),
    log: t.log,
    now: t.clock.now,
    debounceMs,
    ours: (id) => id !== undefined && ours.has(id),
    unheld,
    contendedWakes: new ContendedWakes(),
  };
  /** The passes asked for, as the work queue logged them (a delayed message cannot be peeked). */
  const enqueued = () => t.log.lines.filter((l) => l.event === "enqueue");
  return { t, deps, ours, unheld, enqueued };
}
