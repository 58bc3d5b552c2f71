import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handleStatus } from "../../src/intake/statusHttp";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { API, refusals, request } from "./requests";

/**
 * src/intake/statusHttp.ts: GET /api/status answers JSON by default and the page to a browser (with headers that keep
 * it from being framed, sniffed or leaking its URL), poison messages on request, and refuses a bad target or method.
 */
const BROWSER = { accept: "text/html,application/xhtml+xml,*/*;q=0.8" };

describe("handleStatus", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { POOLSYNC_AUTH: "key" } });
    await h.services.queue.sendToPoison("{not json", "message is not JSON");
  });
  afterAll(async () => {
    await h.stop();
  });
  const status = (query: string, headers: Record<string, string> = {}, method = "GET") =>
    handleStatus(request(method, `${API}/status${query}`, headers), h.services);

  it("answers JSON by default, never cached, and the poison messages only on ?poison=1", async () => {
    const plain = await status("");
    expect(plain.status).toBe(200);
    expect(plain.headers).toMatchObject({
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-store",
    });
    expect(plain.jsonBody).toMatchObject({ queue: { poison: 1 } });
    expect((plain.jsonBody as { poison?: unknown }).poison).toBeUndefined();
    const withPoison = (await status("?poison=1")).jsonBody as { poison: { reason: string }[] };
    expect(withPoison.poison.map((p) => p.reason)).toEqual(["message is not JSON"]);
  });

  it("answers a browser the page, with the poison on it, locked down, and a JSON link without the function key", async () => {
    const page = await status("?code=s3cret&poison=0", BROWSER);
    expect(page.headers).toMatchObject({
      "content-type": "text/html; charset=utf-8",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "content-security-policy": expect.stringContaining("default-src"),
    });
    const text = String(page.body);
    expect(text).toContain("message is not JSON");
    expect(text).toContain('href="/api/status?poison=0&amp;format=json"');
    expect(text).not.toContain("s3cret");
  });

  it("refuses a target it cannot read or may not show, naming the field, and any method but GET", async () => {
    const elsewhere = DEMO.scaleSetId.replace(DEMO.subscription, "99999999-2222-3333-4444-555555555555");
    const answers = await refusals([
      status("?targetId=/subscriptions/x"),
      status(`?scaleSetId=${encodeURIComponent(elsewhere)}`),
      status("?format=json&FORMAT=html"),
      status("", {}, "DELETE"),
    ]);
    expect(answers).toEqual([
      [400, "invalid_field", "targetId"],
      [403, "out_of_scope", "scaleSetId"],
      [400, "repeated_parameter", "format"],
      [405, "method_not_allowed", undefined],
    ]);
  });

  it("shows only the named target's view", async () => {
    const one = (await status(`?targetId=${encodeURIComponent(DEMO.scaleSetId)}`)).jsonBody as {
      scaleSets: { scaleSetId: string }[];
    };
    expect(one.scaleSets.map((v) => v.scaleSetId)).toEqual([DEMO.scaleSetId]);
  });
});
