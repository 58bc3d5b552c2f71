import "../app/telemetryStart";
import { app, type InvocationContext } from "@azure/functions";
import { services } from "../app/services";

/** Queue trigger: one declare or reconcile message → the scale set's reconcile (see src/reconcile). */
export async function applyBackendPools(message: unknown, context: InvocationContext): Promise<void> {
  const meta = context.triggerMetadata ?? {};
  await services().handleQueueMessage(message, {
    id: String(meta.id ?? context.invocationId),
    dequeueCount: Number(meta.dequeueCount ?? 1),
    insertionTime: meta.insertionTime ? new Date(String(meta.insertionTime)).toISOString() : undefined,
  });
}

app.storageQueue("applyBackendPools", {
  queueName: "%POOLSYNC_QUEUE%",
  connection: "AzureWebJobsStorage",
  handler: applyBackendPools,
});
