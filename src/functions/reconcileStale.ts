import "../app/telemetryStart";
import { app, type InvocationContext, type Timer } from "@azure/functions";
import { services } from "../app/services";

/** Timer trigger: the timer's run over stale cache entries and failed declarations (src/reconcile/reconcileStale). */
export async function reconcileStale(_timer: Timer, _context: InvocationContext): Promise<void> {
  await services().reconcileStale();
}

app.timer("reconcileStale", {
  schedule: "%POOLSYNC_RECONCILE_SCHEDULE%",
  runOnStartup: false,
  handler: reconcileStale,
});
