import { afterAll, beforeAll, expect, it } from "vitest";
import { json, startIntakeApp, VALID_DECLARATION, type IntakeApp } from "./support";

/**
 * The API with the default declare window: the first declaration of a quiet scale set asks for a reconcile at once;
 * one accepted with it opens a window whose reconcile is visible at once too: it takes joiners until its pass
 * closes it, and the leading pass stands down for it (or shares its pass).
 */

let app: IntakeApp;
beforeAll(async () => {
  app = await startIntakeApp();
});
afterAll(async () => {
  await app?.stop();
});

it("two declarations of one scale set accepted together: a leading reconcile and the window's, both visible at once", async () => {
  const url = `${app.url}/api/memberships`;
  const answers = await Promise.all(
    ["ipConfigA", "ipConfigB"].map(async (ip) => {
      const res = await fetch(url, json({ ...VALID_DECLARATION, ipConfiguration: ip }));
      expect(res.status).toBe(202);
      return (await res.json()) as { queued: boolean };
    }),
  );
  expect(answers.map((a) => a.queued)).toEqual([true, true]);
  expect((await app.queue.getProperties()).approximateMessagesCount).toBe(2);
  const reconcile = (reason: string) => ({ v: 1, kind: "reconcile", scaleSetId: VALID_DECLARATION.scaleSetId, reason });
  const queued = (await app.peekQueue()) as Array<{ reason: string }>;
  expect(queued.sort((a, b) => a.reason.localeCompare(b.reason))).toEqual([reconcile("gathered: declared via API"), reconcile("leading: declared via API")]);
});
