import { TableClient } from "@azure/data-tables";
import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { testStorageConnectionString } from "../../devkit/storage";

/**
 * A declaration's upsert that loses its row between its read and its conditional replace (another process dropped
 * the row: a removal mark's retention ran out) settles the race itself instead of failing as "storage unavailable".
 */
describe("MembershipTable.upsert under a concurrent delete", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("a row deleted between the read and the replace is created again, not a storage error", async () => {
    // Made once the harness names the table; the policy below runs only after that.
    const other: { table?: TableClient } = {};
    let armed = false;
    // Plays the other process: just before the first conditional replace of a memberships row, the row goes.
    const deleteFirst: PipelinePolicy = {
      name: "deleteBeforeReplace",
      async sendRequest(request, next) {
        const m = /\/([A-Za-z0-9]+)\(PartitionKey='([^']*)',RowKey='([^']*)'\)/.exec(
          decodeURIComponent(new URL(request.url).pathname),
        );
        if (
          armed &&
          request.method === "PUT" &&
          request.headers.get("if-match") &&
          m &&
          m[1] === h!.config.membershipsTable
        ) {
          armed = false;
          await other.table!.deleteEntity(m[2]!, m[3]!);
        }
        return next(request);
      },
    };
    h = await startHarness({ storagePolicies: [deleteFirst] });
    other.table = TableClient.fromConnectionString(testStorageConnectionString(), h.config.membershipsTable, {
      allowInsecureConnection: true,
    });
    const ref = scaleSetRef(DEMO.scaleSetId);
    const base = {
      scaleSetId: DEMO.scaleSetId,
      backendPoolId: DEMO.poolId,
      ipConfiguration: "",
      declaredBy: QUEUE_DECLARER,
    };
    await h.services.declarations.upsert(ref, {
      ...base,
      state: "present",
      declaredAt: "2026-12-02T10:00:00.000Z",
      requestId: "r-1",
    });
    armed = true;
    const second = await h.services.declarations.upsert(ref, {
      ...base,
      state: "absent",
      declaredAt: "2026-12-02T10:00:01.000Z",
      requestId: "r-2",
    });
    expect(armed).toBe(false); // the race was played
    expect(second.result).toBe("created");
    expect((await h.services.declarations.listForTarget(ref)).map((d) => d.state)).toEqual(["absent"]);
  }, 60_000);
});
