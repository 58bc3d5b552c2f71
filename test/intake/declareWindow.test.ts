import { afterAll, beforeAll, expect, it } from "vitest";
import { json, startIntakeApp, VALID_DECLARATION, type IntakeApp } from "./support";

/**
 * The API with the default declare window: declarations of one scale set accepted together ask for one reconcile,
 * invisible until the window ends, so that it reads them all.
 */

let app: IntakeApp;
beforeAll(async () => {
  app = await startIntakeApp();
});
afterAll(async () => {
  await app?.stop();
});

it("two declarations of one scale set accepted together: both queued, one reconcile, visible only after the window", async () => {
  const url = `${app.url}/api/memberships`;
  const answers = await Promise.all(
    ["ipConfigA", "ipConfigB"].map(async (ip) => {
      const res = await fetch(url, json({ ...VALID_DECLARATION, ipConfiguration: ip }));
      expect(res.status).toBe(202);
      return (await res.json()) as { queued: boolean };
    }),
  );
  expect(answers.map((a) => a.queued)).toEqual([true, true]);
  const accepted = Date.now();
  expect((await app.queue.getProperties()).approximateMessagesCount).toBe(1);
  expect(await app.peekQueue()).toEqual([]);

  let seen: unknown[] = [];
  while (seen.length === 0 && Date.now() - accepted < 10_000) {
    await new Promise((r) => setTimeout(r, 100));
    seen = await app.peekQueue();
  }
  expect(Date.now() - accepted).toBeGreaterThanOrEqual(1_000);
  expect(seen).toEqual([{ v: 1, kind: "reconcile", scaleSetId: VALID_DECLARATION.scaleSetId, reason: "gathered: declared via API" }]);
});
