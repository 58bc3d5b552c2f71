import "../app/telemetryStart";
import { app, type EventGridEvent, type InvocationContext } from "@azure/functions";
import { eventGate } from "../app/eventGate";
import { services } from "../app/services";

/**
 * Event Grid trigger: an ARM resource event (either schema) → cache invalidation and, maybe, a reconcile. A batch's
 * events arrive as that many invocations at once; the gate takes them a few at a time (src/app/eventGate.ts).
 */
export async function onResourceEvent(event: EventGridEvent, _context: InvocationContext): Promise<void> {
  await eventGate.run(() => services().handleResourceEvent(event));
}

app.eventGrid("onResourceEvent", { handler: onResourceEvent });
