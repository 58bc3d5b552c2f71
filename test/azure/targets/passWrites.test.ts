import { describe, expect, it } from "vitest";
import { applied, declared, NOW, passOverTwoDeclarations, REF } from "../../support/targetPass";

describe("PassWrites on Azurite", () => {
  it("commits the outcomes with the control row as patched, keeping the caller's handle current", async () => {
    const { store, snapshot, writes } = await passOverTwoDeclarations();
    writes.recordOutcome(snapshot.declarations[0]!, applied);
    writes.patchControl((s) => ({ ...s, debounceAt: NOW }));
    await writes.commit(() => undefined);
    const after = await store.readTarget(REF);
    expect(after.declarations.map((d) => d.outcome.kind).sort()).toEqual(["applied", "pending"]);
    expect(after.control.debounceAt).toBe(NOW);
    expect(writes.control.etag).toBe(after.controlEtag);
  });

  it("after a lost race, drops the outcome of a declaration replaced meanwhile and keeps the other", async () => {
    const { store, declarations, snapshot, writes } = await passOverTwoDeclarations();
    for (const d of snapshot.declarations) writes.recordOutcome(d, applied);
    await declarations.upsert(REF, declared("a", "a-again", 1));
    await writes.commit(() => undefined);
    const after = await store.readTarget(REF);
    const byRequest = Object.fromEntries(after.declarations.map((d) => [d.requestId, d.outcome.kind]));
    expect(byRequest).toEqual({ "a-again": "pending", b: "applied" });
  });

  it("writes nothing when the change aborts", async () => {
    const { store, snapshot, writes } = await passOverTwoDeclarations();
    for (const d of snapshot.declarations) writes.recordOutcome(d, applied);
    expect(await writes.commit(() => "abort")).toBeUndefined();
    expect((await store.readTarget(REF)).declarations.map((d) => d.outcome.kind)).toEqual(["pending", "pending"]);
  });
});
