import { beforeEach, describe, expect, it } from "vitest";
import { parseBindings } from "../../src/core/bindings";
import { parseScope } from "../../src/core/scopes";
import { parseVmId } from "../../src/core/resourceIds";
import { activeDeclarations } from "../../src/reconcile/activeDeclarations";
import { OutcomeRecorder } from "../../src/reconcile/recordOutcomes";
import { scaleSetRef } from "../support/refs";
import { targetTableOnAzurite } from "../support/targetTable";

/**
 * Which declarations a pass may write: the pool rules checked again at write time (they may have narrowed since the
 * intake), each refusal recorded on its declaration's row (Azurite), and a failure's retry time waited out.
 */
const SUB = "00000000-0000-0000-0000-0000000000b6";
const RG = `/subscriptions/${SUB}/resourceGroups/rg`;
const REF = scaleSetRef(`${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-act`);
const pool = (rg: string, name: string) =>
  `/subscriptions/${SUB}/resourceGroups/${rg}/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/${name}`;
const [OK, OTHER_RG, UNBOUND] = [pool("rg", "ok"), pool("elsewhere", "out"), pool("rg", "unbound")];

function rules(text: string) {
  const scope = parseScope(RG);
  const bindings = parseBindings(text);
  if (!scope.ok || !bindings.ok) throw new Error("test bug: rules");
  return { scopes: [scope.value], bindings: bindings.value };
}
const config = rules(
  `${RG}/providers/Microsoft.Compute/virtualMachineScaleSets => ${RG}/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/ok`,
);

describe("activeDeclarations", () => {
  let t: Awaited<ReturnType<typeof targetTableOnAzurite>>;
  beforeEach(async () => {
    t = await targetTableOnAzurite("active");
  });

  it("keeps what the rules allow and refuses the rest on its row, naming the rule it broke", async () => {
    const listed = await t.declare(REF, [
      { backendPoolId: OK },
      { backendPoolId: OTHER_RG },
      { backendPoolId: UNBOUND },
    ]);
    const outcomes = new OutcomeRecorder(REF, t.declarations, t.clock);
    const r = await activeDeclarations(REF, listed, outcomes, config, t.clock.now());
    expect(r.active.map((d) => d.backendPoolId)).toEqual([OK]);
    expect(r.waiting).toBe(0);
    const after = await t.declarations.listForTarget(REF);
    expect(t.byPool(after, OK).outcome.kind).toBe("pending");
    expect(t.byPool(after, OTHER_RG).outcome).toMatchObject({
      kind: "refused",
      reason: "backend pool is outside POOLSYNC_SCOPES",
    });
    expect(t.byPool(after, UNBOUND).outcome).toMatchObject({
      kind: "refused",
      reason: expect.stringMatching(/^refused by POOLSYNC_BINDINGS: /),
    });
  });

  it("refuses a stored pool ID that does not parse, saying why", async () => {
    // The table is input: a row whose pool is not a backend pool's ID (planted, or stored by an older host).
    const listed = await t.declare(REF, [{ backendPoolId: `${RG}/providers/Microsoft.Network/loadBalancers/lb` }]);
    const outcomes = new OutcomeRecorder(REF, t.declarations, t.clock);
    const r = await activeDeclarations(REF, listed, outcomes, config, t.clock.now());
    expect(r.active).toEqual([]);
    expect((await t.declarations.listForTarget(REF))[0]!.outcome).toMatchObject({
      kind: "refused",
      reason: expect.stringMatching(/^backendPoolId /),
    });
  });

  it("a scale set's failed declaration waits out its retry time; then it is written again", async () => {
    const outcomes = new OutcomeRecorder(REF, t.declarations, t.clock);
    const [d] = await t.declare(REF, [{ backendPoolId: OK }]);
    await outcomes.record(d!, outcomes.failed("ARM said no", 60_000));
    const failed = await t.declarations.listForTarget(REF);
    expect(await activeDeclarations(REF, failed, outcomes, config, t.clock.now())).toEqual({ active: [], waiting: 1 });
    t.clock.advance(60_000);
    const due = await activeDeclarations(REF, failed, outcomes, config, t.clock.now());
    expect(due.active).toHaveLength(1);
  });

  it("a VM's failed declaration does not wait: the VM target has no retry time of its own", async () => {
    const vm = parseVmId(`${RG}/providers/Microsoft.Compute/virtualMachines/vm-act`);
    if (!vm.ok) throw new Error(vm.reason);
    const outcomes = new OutcomeRecorder(vm.value, t.declarations, t.clock);
    const [d] = await t.declare(vm.value, [{ backendPoolId: OK }]);
    await outcomes.record(d!, outcomes.failed("ARM said no", 60_000));
    const vmRules = rules("*");
    const r = await activeDeclarations(
      vm.value,
      await t.declarations.listForTarget(vm.value),
      outcomes,
      vmRules,
      t.clock.now(),
    );
    expect(r).toMatchObject({ waiting: 0, active: [expect.objectContaining({ backendPoolId: OK })] });
  });
});
