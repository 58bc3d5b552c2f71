import { afterAll, beforeAll, expect, it } from "vitest";
import { json, startIntakeApp, VALID_DECLARATION, type IntakeApp } from "./support";

/**
 * The API with the default declare window: the first declaration of a quiet scale set asks for a reconcile at once;
 * one accepted with it opens a window, its reconcile invisible until the window ends, so that it reads all that come.
 */

let app: IntakeApp;
beforeAll(async () => {
  app = await startIntakeApp();
});
afterAll(async () => {
  await app?.stop();
});

it("two declarations of one scale set accepted together: one reconcile at once, one visible only after the window", async () => {
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
  expect((await app.queue.getProperties()).approximateMessagesCount).toBe(2);
  const reconcile = (reason: string) => ({ v: 1, kind: "reconcile", scaleSetId: VALID_DECLARATION.scaleSetId, reason });
  expect(await app.peekQueue()).toEqual([reconcile("leading: declared via API")]);

  let seen: unknown[] = [];
  while (seen.length < 2 && Date.now() - accepted < 10_000) {
    await new Promise((r) => setTimeout(r, 100));
    seen = await app.peekQueue();
  }
  expect(Date.now() - accepted).toBeGreaterThanOrEqual(1_000);
  expect(seen).toEqual([reconcile("leading: declared via API"), reconcile("gathered: declared via API")]);
});
