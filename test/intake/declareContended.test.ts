import { HttpRequest } from "@azure/functions";
import { TableClient } from "@azure/data-tables";
import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { afterEach, describe, expect, it } from "vitest";
import { testStorageConnectionString } from "../../devkit/storage";
import { handleMemberships } from "../../src/intake/membershipsHttp";
import { DEMO, startHarness, type Harness } from "../support/harness";

/**
 * Issue 26's 503 hunt: `PUT /api/memberships` answered 503 `storage_unavailable` while storage was up. One path that
 * does so: the declaration's row changes under every one of the upsert's conditional writes (reconciles recording
 * outcomes on it), the upsert gives up, and the intake took that for an outage. It is a race: 409 `contended`.
 */
describe("PUT /api/memberships while others keep writing the declaration's row (Azurite)", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("answers 409 contended with Retry-After, never 503 storage_unavailable", async () => {
    const other: { table?: TableClient } = {};
    let rivals = 0;
    // Plays the other writers: just before each conditional replace of a memberships row, the row is written again.
    const rewriteFirst: PipelinePolicy = {
      name: "rewriteBeforeReplace",
      async sendRequest(request, next) {
        const m = /\/([A-Za-z0-9]+)\(PartitionKey='([^']*)',RowKey='([^']*)'\)/.exec(
          decodeURIComponent(new URL(request.url).pathname),
        );
        if (request.method === "PUT" && request.headers.get("if-match") && m && m[1] === h!.config.membershipsTable) {
          rivals++;
          await other.table!.updateEntity(
            { partitionKey: m[2]!, rowKey: m[3]!, outcomeAt: new Date().toISOString() },
            "Merge",
          );
        }
        return next(request);
      },
    };
    h = await startHarness({ storagePolicies: [rewriteFirst], env: { POOLSYNC_AUTH: "key" } });
    other.table = TableClient.fromConnectionString(testStorageConnectionString(), h.config.membershipsTable, {
      allowInsecureConnection: true,
    });
    const put = (state: string) =>
      handleMemberships(
        new HttpRequest({
          method: "PUT",
          url: "http://127.0.0.1/api/memberships",
          headers: { "content-type": "application/json" },
          body: { string: JSON.stringify({ scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state }) },
        }),
        h!.services,
      );
    expect((await put("present")).status).toBe(202); // created: no conditional write
    const res = await put("absent");
    // Every replace of the upsert met a rival write: its 8 tries, the first on the row the cap check listed.
    expect(rivals).toBe(8);
    expect(res.status).toBe(409);
    expect(res.jsonBody).toMatchObject({ error: { code: "contended" } });
    expect(new Headers(res.headers as Record<string, string>).get("retry-after")).toBe("1");
    expect(h.logs.lines.some((l) => l.event === "intake.store-failed")).toBe(false);
  }, 60_000);
});
