import type { ScaleSetModel } from "../core/models";
import type { Clock, ComputePort, Logger, ModelCache } from "../core/ports";
import { parseScaleSetId, type ScaleSetRef } from "../core/resourceIds";
import { mapLimit } from "../core/retryPolicy";
import { listPays, listResourceGroup } from "./listResourceGroup";

/**
 * A reconcile that must read its scale set's model from ARM reads its resource group instead when other cached scale
 * sets of the group are due too (stale or past the TTL): one LIST page answers them all, where each would cost a GET
 * of its own at its next reconcile or timer run (an event storm over a group, a deployment touching all of it).
 *
 * Each neighbour's model is stored conditionally on its row's Table ETag read before the LIST, so an invalidation
 * that came while the LIST was in flight wins; and without touching the row, so a neighbour's reads never keep an
 * undeclared scale set cached. Answers undefined (read by GET) when the LIST would not pay or did not show it.
 */
/**
 * CRP moves a scale set's ETag 1–5 s after every instance write (its own internal operation), with no event: a row
 * marked stale by an instance write (ours, or an event's) only this long ago is left to its own reconcile, because
 * a LIST now would cache the ETag about to go and that scale set's next write would meet a 412.
 */
export const SETTLE_MS = 10_000;

export interface GroupReadDeps {
  cache: Pick<ModelCache, "enabled" | "listGroupRows" | "refreshScaleSet">;
  clock: Clock;
  log: Logger;
  config: { cacheTtlMs: number };
}

export async function readThroughGroup(
  ref: ScaleSetRef,
  compute: Pick<ComputePort, "listScaleSetsPage">,
  deps: GroupReadDeps,
): Promise<ScaleSetModel | undefined> {
  if (!deps.cache.enabled) return undefined;
  const scope = { subscriptionId: ref.subscriptionId, resourceGroup: ref.resourceGroup };
  const rows = await deps.cache.listGroupRows(scope);
  const now = deps.clock.now();
  // Not a neighbour with one of our writes in flight: a LIST from before that write, stored over its mark, would make
  // the write's own answer lose its store and its event pass as ours, leaving the older model looking fresh. Nor one
  // that went stale moments ago: its ETag may be about to move again (see SETTLE_MS).
  const due = rows.filter(
    (r) =>
      r.scaleSetKey !== ref.key &&
      !r.writing &&
      (r.stale ? now - r.staleAt >= SETTLE_MS : now - r.readAt >= deps.config.cacheTtlMs),
  );
  if (!listPays(1 + due.length, rows.length)) return undefined;
  // No more pages than the GETs it saves: a LIST cut short costs at worst what the GETs would have.
  const listed = await listResourceGroup(compute, scope, { maxPages: due.length });
  let refreshed = 0;
  await mapLimit(due, 8, async (row) => {
    const model = listed.models.get(row.scaleSetKey);
    const neighbour = model && parseScaleSetId(model.id);
    if (model && neighbour?.ok && (await deps.cache.refreshScaleSet(neighbour.value, model, row.rowEtag))) refreshed++;
  });
  deps.log.info("reconcile.groupList", {
    scaleSetId: ref.id,
    resourceGroup: ref.resourceGroup,
    pages: listed.pages,
    due: due.length,
    refreshed,
    listedSelf: listed.models.has(ref.key),
  });
  return listed.models.get(ref.key);
}
