import { describe, expect, it } from "vitest";
import { REMOVED_RETENTION_MS } from "../../../src/azure/targets/declarationRows";
import { MAX_DECLARATIONS_PER_CALLER } from "../../../src/core/declarationCap";
import type { StoredDeclaration } from "../../../src/core/declarations";
import { applied, declared, OTHER, REF } from "../../support/targetPass";
import { targetTableOnAzurite } from "../../support/targetTable";

const requestIds = (ds: readonly StoredDeclaration[]) => ds.map((d) => d.requestId).sort();

describe("TargetDeclarations on Azurite", () => {
  it("stores the upserts of one target made in the same turn as one transaction, answering each caller its own", async () => {
    const { store, declarations } = await targetTableOnAzurite("tdecl");
    const answers = await Promise.all([
      declarations.upsert(REF, declared("a")),
      declarations.upsert(REF, declared("b")),
      declarations.upsert(REF, declared("a", "a-newer", 1)),
    ]);
    expect(answers.map((a) => [a.result, a.stored.requestId])).toEqual([
      ["created", "a"],
      ["created", "b"],
      ["updated", "a-newer"],
    ]);
    const after = await store.readTarget(REF);
    expect(after.control.seq).toBe(1);
    expect(requestIds(after.declarations)).toEqual(["a-newer", "b"]);
  });

  it("stores what arrives while a batch is being written as the next batch", async () => {
    const { store, declarations } = await targetTableOnAzurite("tdecl");
    const first = declarations.upsert(REF, declared("a"));
    // The batch of "a" has left for the table (its turn ended): "b" waits for it.
    await new Promise((r) => setImmediate(r));
    const second = declarations.upsert(REF, declared("b"));
    expect((await Promise.all([first, second])).map((a) => a.result)).toEqual(["created", "created"]);
    expect((await store.readControl(REF)).state.seq).toBe(2);
  });

  it("refuses a declaration past the caller's cap, saying why", async () => {
    const { store, declarations } = await targetTableOnAzurite("tdecl");
    const counts = { present: MAX_DECLARATIONS_PER_CALLER, absent: 0, byCaller: { c: MAX_DECLARATIONS_PER_CALLER } };
    await store.updateControl(REF, (s) => ({ state: { ...s, counts }, result: 0 }));
    await expect(declarations.upsert(REF, declared("a"))).rejects.toThrow(
      new RegExp(`refused: .*${MAX_DECLARATIONS_PER_CALLER}`),
    );
    expect(await declarations.listForTarget(REF)).toEqual([]);
  });

  it("records an outcome on the declaration as read, and not on one a newer declaration replaced", async () => {
    const { declarations } = await targetTableOnAzurite("tdecl");
    const { stored: a } = await declarations.upsert(REF, declared("a"));
    const { stored: b } = await declarations.upsert(REF, declared("b"));
    expect(await declarations.recordOutcome(REF, a, applied)).toBe(true);
    await declarations.upsert(REF, declared("b", "b-newer", 1));
    expect(await declarations.recordOutcome(REF, b, applied)).toBe(false);
    const outcomes = (await declarations.listForTarget(REF)).map((d) => [d.requestId, d.outcome.kind]);
    expect(outcomes.sort()).toEqual([
      ["a", "applied"],
      ["b-newer", "pending"],
    ]);
  });

  it("removes a finished declaration and stops counting it, but not one a newer declaration replaced", async () => {
    const { store, declarations } = await targetTableOnAzurite("tdecl");
    const [{ stored: a }, { stored: b }] = await Promise.all([
      declarations.upsert(REF, declared("a")),
      declarations.upsert(REF, declared("b")),
    ]);
    expect(await declarations.remove(REF, a)).toBe(true);
    await declarations.upsert(REF, declared("b", "b-newer", 1));
    expect(await declarations.remove(REF, b)).toBe(false);
    const after = await store.readTarget(REF);
    expect(requestIds(after.declarations)).toEqual(["b-newer"]);
    expect([...after.removed.values()].map((d) => d.requestId)).toEqual(["a"]);
    expect(after.control.counts.present).toBe(1);
  });

  it("lists every target's live declarations, and purges a removal mark only once its retention has passed", async () => {
    const { store, clock, declarations } = await targetTableOnAzurite("tdecl");
    const { stored: a } = await declarations.upsert(REF, declared("a"));
    await declarations.upsert(REF, declared("b"));
    await declarations.upsert(OTHER, { ...declared("x"), scaleSetId: OTHER.id });
    await declarations.remove(REF, a);
    const listed = async (purge: boolean) => {
      const out: StoredDeclaration[] = [];
      for await (const d of declarations.listAll({ purge })) out.push(d);
      return requestIds(out);
    };
    const marks = async () => (await store.readTarget(REF)).removed.size;
    clock.advance(REMOVED_RETENTION_MS - 1);
    expect(await listed(true)).toEqual(["b", "x"]);
    expect(await marks()).toBe(1);
    clock.advance(2);
    expect(await listed(false)).toEqual(["b", "x"]);
    expect(await marks()).toBe(1);
    await listed(true);
    expect(await marks()).toBe(0);
  });
});
