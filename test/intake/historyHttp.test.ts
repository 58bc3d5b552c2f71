import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HistoryEntry } from "../../src/core/history";
import { handleHistory } from "../../src/intake/historyHttp";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { API, refusals, request } from "./requests";

/**
 * src/intake/historyHttp.ts: GET /api/history?targetId= pages through a target's timeline, newest first, as the
 * app's passes wrote it (a declaration, its pass's writes on the simulator, recorded in Azurite).
 */
describe("handleHistory", () => {
  let h: Harness;
  const url = (query: string) => `${API}/history?targetId=${encodeURIComponent(DEMO.scaleSetId)}${query}`;
  const history = (query = "") => handleHistory(request("GET", url(query)), h.services);
  beforeAll(async () => {
    h = await startHarness({ env: { POOLSYNC_AUTH: "key" } });
    await h.send({ v: 1, kind: "declare", scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" });
    await h.drainUntilEmpty(30_000);
  });
  afterAll(async () => {
    await h.stop();
  });

  it("answers the target's timeline newest first: the pass's writes after the declaration that asked for them", async () => {
    const res = await history();
    expect(res.status).toBe(200);
    const { targetId, entries } = res.jsonBody as { targetId: string; entries: HistoryEntry[] };
    expect(targetId).toBe(DEMO.scaleSetId);
    const kinds = entries.map((e) => e.kind);
    expect(kinds.at(-1)).toBe("declaration");
    expect(kinds).toContain("write");
    expect(entries.map((e) => e.at)).toEqual(
      entries
        .map((e) => e.at)
        .sort()
        .reverse(),
    );
  });

  it("pages by limit, handing a cursor to the next page and none after the last", async () => {
    const all = (await history()).jsonBody as { entries: HistoryEntry[] };
    const first = (await history("&limit=1")).jsonBody as { entries: HistoryEntry[]; next?: string };
    expect(first.entries).toEqual(all.entries.slice(0, 1));
    expect(first.next).toMatch(/^h\|\d{13}\|[0-9a-f]{8}$/);
    const rest = (await history(`&limit=200&cursor=${encodeURIComponent(first.next!)}`)).jsonBody as {
      entries: HistoryEntry[];
      next?: string;
    };
    expect(rest.entries).toEqual(all.entries.slice(1));
    expect(rest.next).toBeUndefined();
  });

  it("refuses a limit outside 1 to 200 and a cursor it did not give, naming each", async () => {
    const answers = await refusals(["&limit=0", "&limit=2.5", "&limit=201", "&cursor=h|1|x"].map((q) => history(q)));
    expect(answers).toEqual([
      [400, "invalid_field", "limit"],
      [400, "invalid_field", "limit"],
      [400, "invalid_field", "limit"],
      [400, "invalid_field", "cursor"],
    ]);
  });
});
