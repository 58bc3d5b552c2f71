import { HttpRequest } from "@azure/functions";
import { TableClient } from "@azure/data-tables";
import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { afterEach, describe, expect, it } from "vitest";
import { testStorageConnectionString } from "../../devkit/storage";
import { handleMemberships } from "../../src/intake/membershipsHttp";
import { CONTROL_ROW, targetPartition } from "../../src/azure/targets/rowKeys";
import { scaleSetRef } from "../support/refs";
import { DEMO, startHarness, type Harness } from "../support/harness";

/**
 * Issue 26's 503 hunt: `PUT /api/memberships` answered 503 `storage_unavailable` while storage was up. One path that
 * does so: the target changes under every one of the intake's conditional transactions (other intakes, passes,
 * events writing its control row), the intake gives up, and took that for an outage. It is a race: 409 `contended`.
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
    // Plays the other writers: just before each transaction that stores a declaration of the target (its rows and
    // its control row), the control row is written again, as another host's intake or pass would.
    const rewriteFirst: PipelinePolicy = {
      name: "rewriteBeforeStore",
      async sendRequest(request, next) {
        const body = typeof request.body === "string" ? request.body : "";
        const storesDeclaration =
          request.method === "POST" &&
          new URL(request.url).pathname.endsWith("$batch") &&
          body.includes(`/${h!.config.membershipsTable}`) &&
          // An update of the control row (a create names no row in its URL: the first declaration has no rival).
          body.includes("RowKey='!control'") &&
          body.includes('"backendPoolId"');
        if (storesDeclaration) {
          rivals++;
          await other.table!.updateEntity(
            { partitionKey: targetPartition(scaleSetRef(DEMO.scaleSetId)), rowKey: CONTROL_ROW },
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
    // Every transaction of the intake met a rival write: its 16 tries.
    expect(rivals).toBe(16);
    expect(res.status).toBe(409);
    expect(res.jsonBody).toMatchObject({ error: { code: "contended" } });
    expect(new Headers(res.headers as Record<string, string>).get("retry-after")).toBe("1");
    expect(h.logs.lines.some((l) => l.event === "intake.store-failed")).toBe(false);
  }, 60_000);
});
