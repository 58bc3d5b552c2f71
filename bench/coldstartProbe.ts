// One cold start, in a fresh process: `node dist/bench/coldstartProbe.js <unpacked app dir> <function name>`.
// Loads the app as the Functions Node.js worker does (the `@azure/functions-core` stand-in in place, then every file
// of package.json's `main`), then handles one first invocation of the named function, and prints one JSON line.
// The app's settings come from the environment (the parent sets them, as the host would from app settings).
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  capturedFunctions,
  installCoreStandIn,
  withLoadingEntry,
  type CapturedFunction,
} from "../local/host/coreStandIn";
import { eventInvocation } from "../local/host/eventGridWebhook";
import { expandGlob } from "../local/host/glob";
import { toRpcHttpRequest } from "../local/host/httpTrigger";
import type { InvocationInput } from "../local/host/invoke";
import { invokeCaptured } from "../local/host/invoke";
import { queueTriggerInput } from "../local/host/queueMessage";
import { toHostTypedData } from "../local/host/typedData";

export interface ProbeResult {
  function: string;
  /** Milliseconds since the process started (performance.timeOrigin) when every function was registered. */
  registeredSinceStartMs: number;
  /** Milliseconds the entry files took to load and register (the app's own share of the above). */
  registerMs: number;
  /** Milliseconds from registration to the first invocation handled. */
  firstInvocationMs: number;
  /** Milliseconds since the process started when the first invocation was handled. */
  handledSinceStartMs: number;
  functions: number;
  /** Module files of the app's package that were loaded by then (require.cache entries under the app dir). */
  modulesLoaded: number;
  ok: boolean;
  error?: string;
}

/** The first invocation each trigger kind gets, shaped as the host sends it. */
export interface ProbeInputs {
  /** A declare message for the queue trigger. */
  queueMessage: string;
  /** An ARM event for the Event Grid trigger. */
  event: Record<string, unknown>;
  /** The target the HTTP functions that read one (memberships, plan, history) are asked about. */
  scaleSetId: string;
}

/** The first GET of each HTTP function: its query, if it needs one to answer 200. */
const HTTP_QUERY: Record<string, (inputs: ProbeInputs) => string> = {
  memberships: (i) => `?scaleSetId=${encodeURIComponent(i.scaleSetId)}`,
  plan: (i) => `?targetId=${encodeURIComponent(i.scaleSetId)}`,
  history: (i) => `?targetId=${encodeURIComponent(i.scaleSetId)}`,
};

function bindingName(fn: CapturedFunction): { name: string; type: string } {
  const entry = Object.entries(fn.metadata.bindings).find(
    ([, b]) => typeof b.type === "string" && /trigger$/i.test(b.type),
  );
  if (!entry) throw new Error(`Function "${fn.metadata.name}" has no trigger binding`);
  return { name: entry[0], type: String(entry[1].type) };
}

function inputFor(fn: CapturedFunction, inputs: ProbeInputs): InvocationInput {
  const { name, type } = bindingName(fn);
  switch (type) {
    case "httpTrigger": {
      const query = HTTP_QUERY[fn.metadata.name]?.(inputs) ?? "";
      const url = new URL(`http://127.0.0.1:7071/api/${fn.metadata.name}${query}`);
      return {
        inputData: [
          { name, data: { http: toRpcHttpRequest("GET", url, { accept: "application/json" }, Buffer.alloc(0), {}) } },
        ],
      };
    }
    case "eventGridTrigger":
      return eventInvocation(fn.metadata.name, name, inputs.event);
    case "queueTrigger":
      return {
        inputData: [
          { name, data: queueTriggerInput({ text: inputs.queueMessage, bytes: Buffer.from(inputs.queueMessage) }) },
        ],
        triggerMetadata: { id: { string: randomUUID() }, dequeueCount: { int: 1 } },
      };
    case "timerTrigger":
      return {
        inputData: [
          { name, data: toHostTypedData({ schedule: { adjustForDST: true }, scheduleStatus: null, isPastDue: false }) },
        ],
      };
    default:
      throw new Error(`No first invocation for a ${type} of "${fn.metadata.name}"`);
  }
}

export async function probe(appDir: string, functionName: string, inputs: ProbeInputs): Promise<ProbeResult> {
  installCoreStandIn();
  const main = (JSON.parse(readFileSync(join(appDir, "package.json"), "utf8")) as { main: string }).main;
  const files = expandGlob(main, appDir);
  const t0 = performance.now();
  // The worker loads the entry files by require, and so must the probe.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  for (const file of files) withLoadingEntry(file, () => require(file));
  const registered = performance.now();
  const functions = capturedFunctions();
  const fn = functions.find((f) => f.metadata.name === functionName);
  if (!fn)
    throw new Error(
      `No function "${functionName}" registered from ${main} (${functions.map((f) => f.metadata.name).join(", ")})`,
    );
  let ok = true;
  let error: string | undefined;
  try {
    const response = await invokeCaptured(fn, inputFor(fn, inputs), () => undefined);
    const status = (response.returnValue as { http?: { statusCode?: string } } | undefined)?.http?.statusCode;
    if (status !== undefined && !/^2/.test(status)) throw new Error(`answered ${status}`);
  } catch (err) {
    ok = false;
    error = (err as Error).message;
  }
  const handled = performance.now();
  return {
    function: functionName,
    registeredSinceStartMs: registered,
    registerMs: registered - t0,
    firstInvocationMs: handled - registered,
    handledSinceStartMs: handled,
    functions: functions.length,
    modulesLoaded: Object.keys(require.cache).filter((k) => k.startsWith(appDir)).length,
    ok,
    ...(error ? { error } : {}),
  };
}

if (require.main === module) {
  const [appDir, functionName, inputsJson] = process.argv.slice(2);
  if (!appDir || !functionName || !inputsJson) {
    console.error("usage: node coldstartProbe.js <app dir> <function name> <inputs JSON>");
    process.exit(2);
  }
  probe(appDir, functionName, JSON.parse(inputsJson) as ProbeInputs).then(
    (r) => {
      console.log(`COLDSTART ${JSON.stringify(r)}`);
      // Open sockets (keep-alive agents) must not hold the measured process up: the answer is in.
      process.exit(0);
    },
    (err: unknown) => {
      console.error((err as Error).stack ?? String(err));
      process.exit(1);
    },
  );
}
