import { QUEUE_DECLARER } from "../../src/core/declarations";
import { parseTargetId, type TargetRef } from "../../src/core/resourceIds";
import type { Harness } from "./harness";

/** A target of a made-up or seeded ID; a bad one is a bug in the test. */
export function targetRef(id: string): TargetRef {
  const r = parseTargetId(id);
  if (!r.ok) throw new Error(`test bug: ${id} ${r.reason}`);
  return r.value;
}

/** Stores declarations of one target straight into the harness's store (as the intake would), each newer than the last. */
export function declareOn(h: Harness, ref: TargetRef) {
  let seq = 0;
  return (backendPoolId: string, state: "present" | "absent" = "present") =>
    h.services.declarations.upsert(ref, {
      scaleSetId: ref.id,
      backendPoolId,
      ipConfiguration: "",
      state,
      declaredAt: new Date(Date.now() + ++seq).toISOString(),
      requestId: `${ref.name}-${seq}-${Date.now()}`,
      declaredBy: QUEUE_DECLARER,
    });
}
