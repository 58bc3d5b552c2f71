import Module from "node:module";
import type {
  CoreFunctionMetadata,
  Disposable,
  FunctionCallback,
  HookCallback,
  ProgrammingModel,
  RpcFunctionMetadata,
} from "./coreTypes";

/**
 * A stand-in for `@azure/functions-core`, the module the Functions Node.js worker injects into `require` so that
 * `@azure/functions` can register functions with it. Without it the library silently switches to "test mode"
 * (it prints a warning and drops every `app.*` registration), and it caches that decision for the life of the
 * process: `tryGetCoreApiLazy` memoises the failed require. So the stand-in must be in place before the library is
 * first used, and anything registered earlier is lost for good; `assertLibraryUsesStandIn` detects that case.
 *
 * The state lives on `globalThis` under a registered symbol: the process has one `require` and one module cache,
 * so it must have one registry even if this file is evaluated twice (test runners re-evaluate source modules).
 */

export const CORE_MODULE_NAME = "@azure/functions-core";
export const HOOK_NAMES = ["preInvocation", "postInvocation", "appStart", "appTerminate"] as const;
export type HookName = (typeof HOOK_NAMES)[number];

export interface CapturedFunction {
  /** The metadata as the worker forwards it to the host: the library's bindings plus `rawBindings` JSON strings. */
  metadata: RpcFunctionMetadata & { name: string; functionId: string; bindings: CoreFunctionMetadata["bindings"] };
  callback: FunctionCallback;
  /** The entry file being loaded when the registration happened (undefined when outside `loadRegisteredFunctions`). */
  sourceFile: string | undefined;
}

interface CoreState {
  functions: Map<string, CapturedFunction>;
  hooks: Map<HookName, HookCallback[]>;
  programmingModel: ProgrammingModel | undefined;
  /** Entry files currently being `require`d, innermost last; registrations are attributed to the outermost. */
  loading: string[];
  /** Module-cache keys present when the stand-in was installed: those modules ran before it existed. */
  cachedBeforeInstall: Set<string>;
  appHookData: Record<string, unknown>;
  api: Record<string, unknown>;
}

const STATE_KEY = Symbol.for("poolsync.local.functionsCoreStandIn");
/** Registrations under this name are the probe of `assertLibraryUsesStandIn`, never real functions. */
const PROBE_NAME = "__poolsyncLocalRuntimeProbe";

type GlobalWithState = typeof globalThis & { [STATE_KEY]?: CoreState };
type ModuleLoad = (request: string, parent: unknown, isMain: boolean) => unknown;

class StandInDisposable implements Disposable {
  #onDispose: () => unknown;
  constructor(onDispose: () => unknown) {
    this.#onDispose = onDispose;
  }
  static from(...items: { dispose: () => unknown }[]): StandInDisposable {
    return new StandInDisposable(() => items.forEach((i) => i.dispose()));
  }
  dispose(): unknown {
    return this.#onDispose();
  }
}

function createState(): CoreState {
  const state: CoreState = {
    functions: new Map(),
    hooks: new Map(HOOK_NAMES.map((h) => [h, []])),
    programmingModel: undefined,
    loading: [],
    cachedBeforeInstall: new Set(Object.keys(require.cache)),
    appHookData: {},
    api: {},
  };
  // Deliberately no `log` member: the library only enables HTTP streaming when the core has one, and this runtime
  // does not implement the streaming proxy, so `app.setup({ enableHttpStream: true })` fails at load with the
  // library's own message instead of hanging on the first request. System logs then go to the console.
  state.api = {
    version: "local",
    hostVersion: "4.0.0-local",
    registerFunction: (metadata: CoreFunctionMetadata, callback: FunctionCallback) =>
      registerFunction(state, metadata, callback),
    registerHook: (hookName: string, callback: HookCallback) => registerHook(state, hookName, callback),
    setProgrammingModel: (model: ProgrammingModel) => {
      state.programmingModel = model;
    },
    getProgrammingModel: () => state.programmingModel,
    Disposable: StandInDisposable,
  };
  return state;
}

function registerFunction(state: CoreState, metadata: CoreFunctionMetadata, callback: FunctionCallback): Disposable {
  if (metadata.name === PROBE_NAME) return new StandInDisposable(() => undefined);
  if (typeof callback !== "function") throw new Error(`Function "${metadata.name}" was registered without a handler`);
  const functionId = metadata.functionId || metadata.name;
  if (state.functions.has(functionId)) {
    throw new Error(
      `A function named "${metadata.name}" is already registered; function names must be unique within the app`,
    );
  }
  // Same shape the worker sends the host: `rawBindings` (one JSON string per binding, with its name) is what the host
  // reads; `bindings` is what the library's invocation model reads back. `scriptFile` is required by the host only.
  const rawBindings = Object.entries(metadata.bindings).map(([name, binding]) => JSON.stringify({ ...binding, name }));
  state.functions.set(functionId, {
    metadata: { ...metadata, functionId, rawBindings, scriptFile: "n/a" },
    callback,
    sourceFile: state.loading[0],
  });
  return new StandInDisposable(() => state.functions.delete(functionId));
}

function registerHook(state: CoreState, hookName: string, callback: HookCallback): Disposable {
  const list = state.hooks.get(hookName as HookName);
  if (!list) {
    // The library turns a RangeError from an unknown hook into "requires a newer host": the right message here too.
    const err = new RangeError(`Unknown hook "${hookName}"; the local runtime supports ${HOOK_NAMES.join(", ")}`);
    (err as RangeError & { isAzureFunctionsSystemError?: boolean }).isAzureFunctionsSystemError = true;
    throw err;
  }
  list.push(callback);
  return new StandInDisposable(() => {
    const i = list.indexOf(callback);
    if (i >= 0) list.splice(i, 1);
  });
}

/**
 * Makes `require("@azure/functions-core")` return the stand-in, from any module, from now on. Idempotent.
 * Hooks `Module._load` (the worker proxies `Module.prototype.require`; `_load` is what that calls, and it also
 * sees requires made through `createRequire`).
 */
export function installCoreStandIn(): CoreState {
  const g = globalThis as GlobalWithState;
  const existing = g[STATE_KEY];
  if (existing) return existing;
  const state = createState();
  g[STATE_KEY] = state;
  const mod = Module as unknown as { _load: ModuleLoad };
  const original = mod._load;
  mod._load = function (this: unknown, request: string, parent: unknown, isMain: boolean): unknown {
    if (request === CORE_MODULE_NAME) return state.api;
    return original.call(this, request, parent, isMain);
  };
  return state;
}

export function coreState(): CoreState {
  return installCoreStandIn();
}

/**
 * Forgets every function and hook registered so far, keeping the stand-in installed and the library's programming
 * model: for a process that loads one app after another (the unisolated test workers, each test file its own app).
 */
export function forgetRegistrations(): void {
  const state = (globalThis as GlobalWithState)[STATE_KEY];
  if (!state) return;
  state.functions.clear();
  for (const hooks of state.hooks.values()) hooks.length = 0;
  state.appHookData = {};
}

export function capturedFunctions(): CapturedFunction[] {
  return [...coreState().functions.values()];
}

export function registeredHooks(name: HookName): HookCallback[] {
  return [...(coreState().hooks.get(name) ?? [])];
}

export function appHookData(): Record<string, unknown> {
  return coreState().appHookData;
}

export function currentProgrammingModel(): ProgrammingModel | undefined {
  return coreState().programmingModel;
}

/** Runs `load` with `file` marked as the entry point being loaded, so its registrations name their source. */
export function withLoadingEntry<T>(file: string, load: () => T): T {
  const state = coreState();
  state.loading.push(file);
  try {
    return load();
  } finally {
    state.loading.pop();
  }
}

export function wasLoadedBeforeStandIn(file: string): boolean {
  return coreState().cachedBeforeInstall.has(file);
}

/**
 * Proves that the copy of `@azure/functions` at `libraryPath` talks to the stand-in: registers a probe function
 * through its public API and checks that the stand-in received it. A copy that was used before the stand-in was
 * installed has memoised "no core" and would drop every registration with only a console warning; this turns that
 * into an error that says what happened.
 */
export function assertLibraryUsesStandIn(libraryPath: string): void {
  const state = coreState();
  // The library must come through require, the hook the stand-in patches.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const lib = require(libraryPath) as { app?: { generic?: (name: string, options: unknown) => void } };
  const generic = lib.app?.generic;
  if (typeof generic !== "function")
    throw new Error(`${libraryPath} does not look like @azure/functions (no app.generic)`);
  let received = false;
  const original = state.api.registerFunction as (m: CoreFunctionMetadata, c: FunctionCallback) => Disposable;
  state.api.registerFunction = (m: CoreFunctionMetadata, c: FunctionCallback) => {
    if (m.name === PROBE_NAME) received = true;
    return original(m, c);
  };
  const warn = console.warn;
  const warnings: string[] = [];
  console.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(" "));
  try {
    generic(PROBE_NAME, { trigger: { type: "localRuntimeProbeTrigger", name: "probe" }, handler: () => undefined });
  } finally {
    console.warn = warn;
    state.api.registerFunction = original;
  }
  if (!received) {
    throw new Error(
      `@azure/functions (${libraryPath}) was used before the local runtime installed its @azure/functions-core ` +
        `stand-in, so it is in "test mode" and silently drops every app.* registration` +
        (warnings.length ? ` (it said: ${warnings[0]})` : "") +
        `. Start the local runtime before anything imports the app's function files.`,
    );
  }
}
