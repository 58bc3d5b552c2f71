import { describe, expect, it } from "vitest";
import { parseBindings } from "../../src/core/bindings";
import { parseScope } from "../../src/core/scopes";
import { kindAnswerOf, kindFieldsOf, parseDeclareRequest } from "../../src/intake/declareRequest";
import { POOL_A, VM, VMSS } from "./viewFixtures";

/**
 * src/intake/declareRequest.ts: the body of PUT /api/memberships, refused 400 naming the field when malformed and 403
 * when well formed but for a resource or a pairing poolsync may not touch.
 */
const must = <T>(r: { ok: true; value: T } | { ok: false; reason: string }): T => {
  if (!r.ok) throw new Error(`test bug: ${r.reason}`);
  return r.value;
};
const SCOPES = [must(parseScope("/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/web"))];
const ANY = must(parseBindings("*"));
const body = { targetId: VMSS, backendPoolId: POOL_A, state: "present" };
const refusal = (input: unknown, bindings = ANY) => {
  const r = parseDeclareRequest(input, SCOPES, bindings);
  return r.ok ? "accepted" : r.problem;
};

describe("parseDeclareRequest", () => {
  it("reads a declaration of a scale set or a VM, the primary ip configuration when none is named", () => {
    const r = parseDeclareRequest(body, SCOPES, ANY);
    expect(r.ok && r.value).toMatchObject({
      target: { id: VMSS, kind: "scaleSet" },
      targetField: "targetId",
      pool: { id: POOL_A },
      ipConfiguration: "",
      state: "present",
    });
    const vm = parseDeclareRequest({ targetId: VM, backendPoolId: POOL_A, state: "absent" }, SCOPES, ANY);
    expect(vm.ok && vm.value.target.kind).toBe("vm");
    const legacy = parseDeclareRequest({ scaleSetId: VMSS, backendPoolId: POOL_A, state: "present" }, SCOPES, ANY);
    expect(legacy.ok && legacy.value.targetField).toBe("scaleSetId");
  });

  it("refuses a missing field as missing, a wrong one as invalid, an unknown one as unknown, each naming it", () => {
    expect(refusal({ targetId: VMSS, state: "present" })).toMatchObject({
      status: 400,
      code: "missing_field",
      field: "backendPoolId",
      message: expect.stringMatching(/^backendPoolId: is required/),
    });
    expect(refusal({ ...body, state: "on" })).toMatchObject({ code: "invalid_field", field: "state" });
    expect(refusal({ ...body, colour: "blue" })).toMatchObject({ code: "unknown_field", field: "colour" });
    expect(refusal({ ...body, scaleSetId: VMSS })).toMatchObject({
      code: "invalid_field",
      message: expect.stringContaining("give targetId or scaleSetId, not both"),
    });
  });

  it("refuses a body that is not an object, saying what it is", () => {
    expect(refusal([body])).toMatchObject({
      status: 400,
      code: "not_an_object",
      message: "body must be a JSON object, not an array",
    });
    expect(refusal(null)).toMatchObject({ message: "body must be a JSON object, not null" });
  });

  it("answers 403 for a target outside POOLSYNC_SCOPES, naming the ID and not the scopes", () => {
    const elsewhere = VMSS.replace("/resourceGroups/web/", "/resourceGroups/payments/");
    const p = refusal({ ...body, targetId: elsewhere });
    expect(p).toMatchObject({ status: 403, code: "out_of_scope", field: "targetId" });
    expect((p as { message: string }).message).toBe(`targetId: ${elsewhere} is outside POOLSYNC_SCOPES`);
  });

  it("answers 403 for a pairing no binding rule allows", () => {
    const onlyOther = must(parseBindings(`${VMSS} => ${POOL_A.replace(/\/a$/, "/b")}`));
    expect(refusal(body, onlyOther)).toMatchObject({ status: 403, code: "binding_refused", field: "backendPoolId" });
  });
});

describe("kindFieldsOf and kindAnswerOf", () => {
  it("carry the admin state and its instances only when given, named as stored and as the API answers", () => {
    const req = { adminState: "Down" as const, adminInstances: ["0", "3"] };
    expect(kindFieldsOf(req)).toEqual({ adminState: "Down", adminInstances: ["0", "3"] });
    expect(kindAnswerOf(req)).toEqual({ adminState: "Down", instances: ["0", "3"] });
    expect(kindFieldsOf({})).toEqual({});
  });
});
