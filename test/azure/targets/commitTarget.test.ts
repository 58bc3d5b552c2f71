import { describe, expect, it } from "vitest";
import { commitTarget, TargetConflict, type TargetWrite } from "../../../src/azure/targets/commitTarget";
import { CONTROL_ROW } from "../../../src/azure/targets/rowKeys";
import { emptyControl } from "../../../src/core/control";
import { freshTable } from "../../support/freshTable";

const rows = (n: number): TargetWrite[] =>
  Array.from({ length: n }, (_, i) => ({
    kind: "upsert",
    entity: { rowKey: `c|i|${String(i).padStart(3, "0")}`, v: i },
  }));

const keysIn = async (table: Awaited<ReturnType<typeof freshTable>>) => {
  const keys: string[] = [];
  for await (const e of table.listEntities()) keys.push(e.rowKey ?? "");
  return keys;
};

describe("commitTarget on Azurite", () => {
  it("writes the control row with the rows, and hands back every row's new ETag", async () => {
    const table = await freshTable("commit");
    const done = await commitTarget(table, "p", rows(3), { state: { ...emptyControl(), seq: 1 }, base: undefined });
    expect(done.control).toBe((await table.getEntity("p", CONTROL_ROW)).etag);
    expect([...done.rows.keys()]).toEqual(["c|i|000", "c|i|001", "c|i|002"]);
    expect(done.rows.get("c|i|001")).toBe((await table.getEntity("p", "c|i|001")).etag);
  });

  it("writes more rows than one transaction takes, the control row in the last", async () => {
    const table = await freshTable("commit");
    const done = await commitTarget(table, "p", rows(250), { state: emptyControl(), base: undefined });
    expect(done.rows.size).toBe(250);
    expect(await keysIn(table)).toHaveLength(251);
  });

  it("writes nothing of the last transaction when the control row changed since it was read", async () => {
    const table = await freshTable("commit");
    const first = await commitTarget(table, "p", [], { state: emptyControl(), base: undefined });
    await commitTarget(table, "p", [], { state: { ...emptyControl(), seq: 2 }, base: first.control });
    const stale = commitTarget(table, "p", rows(2), { state: { ...emptyControl(), seq: 3 }, base: first.control });
    await expect(stale).rejects.toBeInstanceOf(TargetConflict);
    expect(await keysIn(table)).toEqual([CONTROL_ROW]);
  });

  it("deletes a row conditionally only while it is as read, and refuses two writes to one row", async () => {
    const table = await freshTable("commit");
    const { rows: etags } = await commitTarget(table, "p", rows(1));
    const base = etags.get("c|i|000") as string;
    await commitTarget(table, "p", [{ kind: "upsert", entity: { rowKey: "c|i|000", v: 9 } }]);
    await expect(commitTarget(table, "p", [{ kind: "delete", rowKey: "c|i|000", base }])).rejects.toBeInstanceOf(
      TargetConflict,
    );
    expect(await keysIn(table)).toEqual(["c|i|000"]);
    await expect(commitTarget(table, "p", [...rows(1), ...rows(1)])).rejects.toThrow(/two writes to row c\|i\|000/);
  });
});
