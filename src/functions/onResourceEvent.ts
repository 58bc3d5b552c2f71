import "../app/telemetryStart";
import { app, type EventGridEvent, type InvocationContext } from "@azure/functions";
import { services } from "../app/services";

/** Event Grid trigger: an ARM resource event (either schema) → cache invalidation and, maybe, a reconcile. */
export async function onResourceEvent(event: EventGridEvent, _context: InvocationContext): Promise<void> {
  await services().handleResourceEvent(event);
}

app.eventGrid("onResourceEvent", { handler: onResourceEvent });
