import { dirname, resolve } from "node:path";
import {
  assertLibraryUsesStandIn,
  capturedFunctions,
  installCoreStandIn,
  wasLoadedBeforeStandIn,
  withLoadingEntry,
  type CapturedFunction,
} from "./coreStandIn";
import type { RpcBindingInfo, RpcInvocationResponse } from "./coreTypes";
import { expandGlob } from "./glob";
import { invokeCaptured, type InvocationInput, type InvocationLogger } from "./invoke";

/** A trigger binding as the host reads it from `rawBindings`: name, type, direction and the trigger's options. */
export interface TriggerBinding {
  name: string;
  type: string;
  direction: "in";
  /** queueTrigger */
  queueName?: string;
  connection?: string;
  /** timerTrigger */
  schedule?: string;
  runOnStartup?: boolean;
  useMonitor?: boolean;
  /** httpTrigger */
  authLevel?: "anonymous" | "function" | "admin";
  methods?: string[];
  route?: string;
  [option: string]: unknown;
}

export interface RegisteredFunction {
  name: string;
  functionId: string;
  /** The built entry file whose evaluation registered it. */
  sourceFile: string | undefined;
  trigger: TriggerBinding;
  /** Every binding, keyed by binding name, as `@azure/functions` built them (trigger, `$return`, extras). */
  bindings: Record<string, RpcBindingInfo>;
  /** One JSON string per binding, exactly what the worker sends the host at indexing time. */
  rawBindings: string[];
  /** Invokes the handler through the library's InvocationModel with host-encoded input. */
  invoke(input: InvocationInput): Promise<RpcInvocationResponse>;
}

export interface LoadOptions {
  /** Glob of built entry points, relative to `appDir`: package.json's `main`, e.g. `dist/src/functions/*.js`. */
  entryGlob: string;
  appDir?: string;
  /** Where invocation logs go; default: the console, prefixed with the function name. */
  log?: InvocationLogger;
  /** host.json's `functionTimeout` in ms: an invocation running longer fails (invoke.ts); undefined: no limit. */
  functionTimeoutMs?: number;
}

export const consoleInvocationLogger: InvocationLogger = (e) => {
  // The app's JSON lines (its logger writes through the invocation's context) stay one JSON object per line.
  const line = e.message.startsWith("{") ? e.message : `[${e.functionName}] ${e.message}`;
  if (e.level === "error" || e.level === "critical") console.error(line);
  else if (e.level === "warning") console.warn(line);
  else if (e.category === "user" || e.level === "information") console.log(line);
};

/**
 * Loads the app's entry points with the `@azure/functions-core` stand-in in place and returns what they registered.
 * Fails loudly, instead of returning an app with missing functions, when: the glob matches nothing; an entry file
 * was already loaded before the stand-in (its registrations went nowhere and a cached module will not run again);
 * the app's copy of `@azure/functions` is in test mode; or nothing registered at all.
 */
export function loadRegisteredFunctions(opts: LoadOptions): RegisteredFunction[] {
  installCoreStandIn();
  const appDir = resolve(opts.appDir ?? process.cwd());
  const files = expandGlob(opts.entryGlob, appDir);
  if (files.length === 0) {
    throw new Error(`No entry points match "${opts.entryGlob}" under ${appDir}; build the app first (npm run build)`);
  }
  const early = files.filter(wasLoadedBeforeStandIn);
  if (early.length > 0) {
    throw new Error(
      `These entry points were loaded before the local runtime's @azure/functions-core stand-in, so their ` +
        `registrations were dropped and cannot be replayed: ${early.join(", ")}`,
    );
  }
  for (const file of files) {
    try {
      // The host loads the app's CommonJS entry points by require, as the Node.js worker does.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      withLoadingEntry(file, () => require(file));
    } catch (err) {
      throw new Error(`Loading ${file} failed: ${(err as Error).message}`, { cause: err });
    }
  }
  const libraries = new Set<string>();
  for (const file of files) {
    try {
      libraries.add(require.resolve("@azure/functions", { paths: [dirname(file)] }));
    } catch {
      // An entry that cannot resolve @azure/functions registers nothing through it; the zero check below covers it.
    }
  }
  for (const lib of libraries) assertLibraryUsesStandIn(lib);

  const fileSet = new Set(files);
  const found = capturedFunctions().filter((f) => f.sourceFile !== undefined && fileSet.has(f.sourceFile));
  if (found.length === 0) {
    throw new Error(
      `The entry points matching "${opts.entryGlob}" registered no functions (${files.length} file(s) loaded)`,
    );
  }
  const log = opts.log ?? consoleInvocationLogger;
  return found.map((f) => describe(f, log, opts.functionTimeoutMs));
}

function describe(fn: CapturedFunction, log: InvocationLogger, timeoutMs: number | undefined): RegisteredFunction {
  const entry = Object.entries(fn.metadata.bindings).find(
    ([, b]) => typeof b.type === "string" && /trigger$/i.test(b.type),
  );
  if (!entry) throw new Error(`Function "${fn.metadata.name}" has no trigger binding`);
  const [name, binding] = entry;
  return {
    name: fn.metadata.name,
    functionId: fn.metadata.functionId,
    sourceFile: fn.sourceFile,
    trigger: { ...binding, name, type: String(binding.type), direction: "in" } as TriggerBinding,
    bindings: fn.metadata.bindings,
    rawBindings: fn.metadata.rawBindings ?? [],
    invoke: (input) => invokeCaptured(fn, input, log, timeoutMs),
  };
}
