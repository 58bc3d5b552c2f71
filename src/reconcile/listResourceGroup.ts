import { NotFoundError } from "../core/errors";
import type { ScaleSetModel } from "../core/models";
import type { ComputePort, ResourceGroupScope } from "../core/ports";
import { parseScaleSetId, type ScaleSetRef } from "../core/resourceIds";

/**
 * Reading many scale sets of one resource group by LIST instead of a GET each: one request answers a page of whole
 * models with their ETags, so the timer's cost grows with resource groups and pages, not with scale sets.
 */

/** The resource group a scale set lives in, as a key (lower case, as ARM compares). */
export function groupKeyOf(ref: Pick<ScaleSetRef, "subscriptionId" | "resourceGroup">): string {
  return `${ref.subscriptionId}/${ref.resourceGroup}`.toLowerCase();
}

/**
 * Azure does not document the page size of a VMSS LIST (the simulator's default is 100). It only serves to guess
 * whether one LIST costs fewer requests than the GETs it replaces: a wrong guess costs reads, never correctness.
 */
export const ASSUMED_LIST_PAGE_SIZE = 100;

/**
 * LIST pays when it replaces at least two GETs and its pages (guessed from the scale sets known in the group)
 * are no more than the GETs it saves. One scale set is always a GET.
 */
export function listPays(toRead: number, knownInGroup: number): boolean {
  return toRead >= 2 && Math.ceil(Math.max(knownInGroup, toRead) / ASSUMED_LIST_PAGE_SIZE) < toRead;
}

export interface ListedGroup {
  /** Models by scale set key, from every page read. */
  models: Map<string, ScaleSetModel>;
  /**
   * Every page was read from the first: a scale set of the group that is not among the models was not there when
   * the LIST ran. False when the budget cut it, it resumed mid-way, or the group itself was not found.
   */
  complete: boolean;
  /** Where the next LIST of the group should start, when the budget stopped this one before its last page. */
  resumeAt: string | undefined;
  pages: number;
}

/**
 * Reads the group's pages, following nextLink, for at most `maxPages` requests (from `resumeFrom` when a previous
 * run was cut). A group that is gone (404) answers nothing and is not complete, so each of its scale sets falls back
 * to a GET, whose own 404 is what records a declaration's target as deleted.
 */
export async function listResourceGroup(
  compute: Pick<ComputePort, "listScaleSetsPage">,
  scope: ResourceGroupScope,
  opts: { maxPages: number; resumeFrom?: string },
): Promise<ListedGroup> {
  const out: ListedGroup = { models: new Map(), complete: false, resumeAt: undefined, pages: 0 };
  let link = opts.resumeFrom;
  try {
    while (out.pages < opts.maxPages) {
      const page = await compute.listScaleSetsPage(scope, link);
      out.pages++;
      for (const model of page.models) {
        const ref = parseScaleSetId(model.id);
        if (ref.ok) out.models.set(ref.value.key, model);
      }
      link = page.nextLink;
      if (!link) {
        out.complete = opts.resumeFrom === undefined;
        return out;
      }
    }
    out.resumeAt = link;
    return out;
  } catch (err) {
    if (err instanceof NotFoundError) return out;
    throw err;
  }
}
