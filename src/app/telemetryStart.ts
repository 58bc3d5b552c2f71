import * as functions from "@azure/functions";
import { registerInvocationHook } from "./invocationHook";
import { startTelemetry } from "./telemetry";
import { registerTelemetryFlush } from "./telemetryFlush";

/**
 * Imported first by every function file: the invocation hook, and OpenTelemetry as the environment asks for it with
 * its flushes (src/app/telemetryFlush.ts), all before the host's first invocation. Importing it twice does nothing
 * twice (a module runs once).
 */
registerInvocationHook(functions.app);

let telemetry: ReturnType<typeof startTelemetry>;
try {
  telemetry = startTelemetry(process.env, functions);
  if (telemetry) registerTelemetryFlush(functions.app, telemetry);
} catch (err) {
  // Telemetry must never keep the app from starting: say why and run without it.
  console.error(JSON.stringify({ level: "error", event: "telemetry.start-failed", reason: (err as Error).message }));
}

export { telemetry };
