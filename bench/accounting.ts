import type { Services } from "../src/app/services";
import { describeError } from "../src/core/errors";
import { parseScaleSetId } from "../src/core/resourceIds";
import type { Refusal } from "./poolsyncRun";
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
  /**
   * The declaration's last outcome as poolsync stored it; "refused" for one refused at intake (the caller was told:
   * the message went to the poison queue with its reason); "no declaration" for a peer or a row that is gone;
   * "unread" when reading the row failed (a Table request past its timeout on a loaded machine): the reason says why.
   */
  outcome: string;
  reason: string | undefined;
  /**
   * A later change of the same pool on the same scale set, declared before this one showed: this one may never show
   * (the pool toggled back before it was applied), which is not a lost change when the later one converged.
   */
  supersededBy?: { id: number; state: Change["state"]; converged: boolean };
}

/**
 * `declared`: every change of the run, in the order they were declared (handed over) (to find the ones superseded);
 * without it none is marked superseded.
 */
export async function accountFor(
  changes: Change[],
  services: Pick<Services, "declarations"> | undefined,
  declared: Change[] = [],
  refusals: readonly Refusal[] = [],
): Promise<Unconverged[]> {
  const out: Unconverged[] = [];
  const missing = new Set(changes.map((c) => c.id));
  const key = (c: Change) => `${c.scaleSetId.toLowerCase()}|${c.poolId.toLowerCase()}`;
  for (const c of changes) {
    const ref = parseScaleSetId(c.scaleSetId);
    // After an hour's run a loaded Azurite may answer one read too late: that change's account is unknown, the rest
    // (and the hour's figures) still stand.
    let rows: Awaited<ReturnType<Services["declarations"]["listForTarget"]>> = [];
    let unread: string | undefined;
    try {
      rows = services && ref.ok ? await services.declarations.listForTarget(ref.value) : [];
    } catch (err) {
      unread = describeError(err);
    }
    const row = rows.find((d) => d.backendPoolId.toLowerCase() === c.poolId.toLowerCase());
    const outcome = row?.outcome;
    const refusal = row ? undefined : refusalOf(c, refusals);
    // Later in declaration (arrival) order, which is not id order in the steady workload.
    const at = declared.findIndex((d) => d.id === c.id);
    const later =
      at < 0
        ? undefined
        : declared
            .slice(at + 1)
            .filter((d) => key(d) === key(c))
            .at(-1);
    out.push({
      id: c.id,
      scaleSetId: c.scaleSetId,
      poolId: c.poolId,
      state: c.state,
      outcome: unread
        ? "unread"
        : outcome
          ? `${outcome.kind}${row && row.state !== c.state ? ` (row now declares ${row.state})` : ""}`
          : refusal
            ? "refused"
            : "no declaration",
      reason: unread ?? (outcome && "reason" in outcome ? String(outcome.reason) : refusal?.reason),
      ...(later ? { supersededBy: { id: later.id, state: later.state, converged: !missing.has(later.id) } } : {}),
    });
  }
  return out;
}

/** The last refusal of this change's pool on its scale set in its state: the change was refused, not lost. */
export function refusalOf(c: Change, refusals: readonly Refusal[]): Refusal | undefined {
  return refusals
    .filter(
      (r) =>
        r.scaleSetId.toLowerCase() === c.scaleSetId.toLowerCase() &&
        r.backendPoolId.toLowerCase() === c.poolId.toLowerCase() &&
        r.state === c.state,
    )
    .at(-1);
}
