import type { Services } from "../src/app/services";
import { parseScaleSetId } from "../src/core/resourceIds";
import type { Change } from "./world";

/**
 * Every change accounted for: a change the benchmark declared that never became visible on the model and every
 * instance is listed with what poolsync's own declaration row says about it (its last outcome and reason), so a
 * report never shows a convergence count short of 100 % without saying which changes and why.
 */
export interface Unconverged {
  id: number;
  scaleSetId: string;
  poolId: string;
  state: Change["state"];
  /** The declaration's last outcome as poolsync stored it; "no declaration" for a peer or a row that is gone. */
  outcome: string;
  reason: string | undefined;
}

export async function accountFor(changes: Change[], services: Pick<Services, "declarations"> | undefined): Promise<Unconverged[]> {
  const out: Unconverged[] = [];
  for (const c of changes) {
    const ref = parseScaleSetId(c.scaleSetId);
    const rows = services && ref.ok ? await services.declarations.listForScaleSet(ref.value) : [];
    const row = rows.find((d) => d.backendPoolId.toLowerCase() === c.poolId.toLowerCase());
    const outcome = row?.outcome;
    out.push({
      id: c.id,
      scaleSetId: c.scaleSetId,
      poolId: c.poolId,
      state: c.state,
      outcome: outcome ? `${outcome.kind}${row && row.state !== c.state ? ` (row now declares ${row.state})` : ""}` : "no declaration",
      reason: outcome && "reason" in outcome ? String(outcome.reason) : undefined,
    });
  }
  return out;
}
