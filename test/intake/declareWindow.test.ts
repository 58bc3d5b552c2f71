import { afterAll, beforeAll, expect, it } from "vitest";
import { json, startIntakeApp, VALID_DECLARATION, type IntakeApp } from "./support";

/**
 * The API with the default declare window (2 s; the other suites of test/intake/support.ts turn it off): the first declaration of a quiet scale set asks for a reconcile at once;
 * one accepted with it opens a window, its reconcile invisible until the window ends, so that it reads all that come.
 */

let app: IntakeApp;
beforeAll(async () => {
  app = await startIntakeApp({ env: { POOLSYNC_DECLARE_WINDOW_SECONDS: "2" } });
});
afterAll(async () => {
  await app?.stop();
});

it("two declarations of one scale set, one after the other: one reconcile at once, one visible only after the window", async () => {
  const url = `${app.url}/api/memberships`;
  const answers = [];
  // One after the other: two requests in the same turn of a host are stored together and share one pass.
  for (const ip of ["ipConfigA", "ipConfigB"]) {
    const res = await fetch(url, json({ ...VALID_DECLARATION, ipConfiguration: ip }));
    expect(res.status).toBe(202);
    answers.push((await res.json()) as { queued: boolean });
  }
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
  expect(Date.now() - accepted).toBeGreaterThanOrEqual(900);
  expect(seen).toEqual([reconcile("leading: declared via API"), reconcile("gathered: declared via API")]);
});

it("two declarations of one scale set in the same turn: stored together, one pass for both", async () => {
  const url = `${app.url}/api/memberships`;
  await app.queue.clearMessages();
  const other = {
    ...VALID_DECLARATION,
    scaleSetId: VALID_DECLARATION.scaleSetId.replace(/etag-k8s-mp-0$/, "etag-k8s-mp-1"),
  };
  const answers = await Promise.all(
    ["ipConfigC", "ipConfigD"].map(async (ip) => (await fetch(url, json({ ...other, ipConfiguration: ip }))).status),
  );
  expect(answers).toEqual([202, 202]);
  await new Promise((r) => setTimeout(r, 3_000));
  const reasons = ((await app.peekQueue()) as Array<{ reason: string }>).map((m) => m.reason);
  // Together (one transaction, one leading pass), or, when the host took them in two turns, one leads and one gathers:
  // never two leading passes.
  expect(reasons.filter((r) => r.startsWith("leading: "))).toHaveLength(1);
  expect(reasons.length).toBeLessThanOrEqual(2);
});
