import { describe, expect, it } from "vitest";
import { PassDeclarations } from "../../../src/azure/targets/passDeclarations";
import { applied, declared, NOW, OTHER, passOverTwoDeclarations, REF } from "../../support/targetPass";

describe("PassDeclarations on Azurite", () => {
  it("a pass's outcomes land with its control row change, in one commit", async () => {
    const { store, snapshot, writes } = await passOverTwoDeclarations();
    const decls = new PassDeclarations(snapshot, writes);
    for (const d of await decls.listForTarget(REF)) await decls.recordOutcome(REF, d, applied);
    const written = await writes.commit((s) => ({ ...s, debounceAt: NOW }));
    expect(written?.debounceAt).toBe(NOW);
    const after = await store.readTarget(REF);
    expect(after.declarations.map((d) => d.outcome.kind)).toEqual(["applied", "applied"]);
    expect(after.control.debounceAt).toBe(NOW);
    expect(writes.control.etag).toBe(after.controlEtag);
  });

  it("a pass reads only its own target's declarations, and neither declares nor removes", async () => {
    const { snapshot, writes } = await passOverTwoDeclarations();
    const decls = new PassDeclarations(snapshot, writes);
    await expect(decls.listForTarget(OTHER)).rejects.toThrow(/only its own target/);
    await expect(decls.upsert(REF, declared("c"))).rejects.toThrow(/does not declare/);
    await expect(decls.remove()).rejects.toThrow(/does not remove/);
  });
});
