import { TargetDeclarations } from "../../src/azure/targets/targetDeclarations";
import type { Declaration } from "../../src/core/declarations";
import { freshTargetStore } from "./freshTable";
import { scaleSetRef } from "./refs";

/** A made-up target for a pass's tests, on a clock that stands at NOW. */
export const NOW = Date.parse("2026-12-02T10:00:00Z");
const RG = "/subscriptions/00000000-aaaa-4bbb-8ccc-000000000469/resourceGroups/rg/providers";
export const REF = scaleSetRef(`${RG}/Microsoft.Compute/virtualMachineScaleSets/vmss`);
export const OTHER = scaleSetRef(`${RG}/Microsoft.Compute/virtualMachineScaleSets/other`);

/** REF's declaration of pool `pool`, declared `minute` minutes after NOW. */
export const declared = (pool: string, requestId = pool, minute = 0): Declaration => ({
  scaleSetId: REF.id,
  backendPoolId: `${RG}/Microsoft.Network/loadBalancers/lb/backendAddressPools/${pool}`,
  ipConfiguration: "",
  state: "present",
  declaredAt: new Date(NOW + minute * 60_000).toISOString(),
  requestId,
  declaredBy: { id: "c", name: "c", via: "queue" },
});

/** REF with declarations of pools "a" and "b" in a table of its own, and a pass's writes over it as read. */
export async function passOverTwoDeclarations() {
  const store = await freshTargetStore(() => NOW);
  const declarations = new TargetDeclarations(store);
  await Promise.all([declarations.upsert(REF, declared("a")), declarations.upsert(REF, declared("b"))]);
  const snapshot = await store.readTarget(REF);
  const writes = store.passWrites(snapshot, { state: snapshot.control, etag: snapshot.controlEtag });
  return { store, declarations, snapshot, writes };
}

export const applied = { kind: "applied" as const, at: new Date(NOW).toISOString() };
