import type { TargetCache } from "../../src/azure/targets/targetCache";
import { DEMO } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { INTAKE_WEBHOOK_KEY, targetsOf, waitFor, type IntakeApp } from "../intake/support";

/**
 * What the event suites share: the local runtime's Event Grid webhook, the demo scale set declared and applied, and
 * before each case every row fresh, the queue empty and a new debounce window.
 */
export interface EventWebhook {
  cache: TargetCache;
  post(body: unknown): Promise<Response>;
  freshRows(): Promise<void>;
}

const enqueue = (app: IntakeApp, message: object) =>
  app.queue.sendMessage(Buffer.from(JSON.stringify(message)).toString("base64"));

export async function declaredDemo(app: IntakeApp, requestId: string): Promise<EventWebhook> {
  const hook = `${app.url}/runtime/webhooks/eventgrid?functionName=onResourceEvent&code=${INTAKE_WEBHOOK_KEY}`;
  const { cache, store } = targetsOf(app);
  const ref = scaleSetRef(DEMO.scaleSetId);
  await app.queue.createIfNotExists();
  await enqueue(app, {
    v: 1,
    kind: "declare",
    scaleSetId: DEMO.scaleSetId,
    backendPoolId: DEMO.poolId,
    state: "present",
    requestId,
  });
  await waitFor(
    () => app.membershipRows(),
    (r) => r.some((x) => x.outcomeKind === "applied"),
    "the declaration applied",
  );
  return {
    cache,
    post: (body) =>
      fetch(hook, {
        method: "POST",
        headers: { "content-type": "application/json", "aeg-event-type": "Notification" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      }),
    async freshRows() {
      await app.queue.clearMessages().catch(() => undefined);
      await enqueue(app, { v: 1, kind: "reconcile", scaleSetId: DEMO.scaleSetId, reason: "test: refresh", attempt: 1 });
      await waitFor(
        async () => (await app.queue.getProperties()).approximateMessagesCount ?? 0,
        (n) => n === 0,
        "the reconcile taken",
      );
      // A new debounce window for each case: forget when the last event-triggered reconcile was claimed.
      await store.updateControl(ref, (c) => ({ state: { ...c, debounceAt: 0 }, result: undefined }));
      await waitFor(
        () => cache.readPartition(ref),
        (p) =>
          p.scaleSet?.stale === false && p.instances.size === 2 && [...p.instances.values()].every((e) => !e.stale),
        "fresh cache rows",
      );
    },
  };
}
