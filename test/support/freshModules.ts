import { createRequire } from "node:module";
import path from "node:path";
import { expect, vi } from "vitest";
import { forgetRegistrations, installCoreStandIn } from "../../local/host/coreStandIn";
import { needsFreshModules } from "./freshModuleFiles";

/**
 * The fast files run unisolated: a worker keeps the Azure SDKs and Node's other externals imported once, and the
 * sources one file imported stay for the next. Before every file, process.env is the worker's as it started (each file
 * sets the app's settings of its own), the local runtime's registry of functions (per process, as the worker's is)
 * forgets the last file's app, and the built app that the runtime loads by `require` (dist/) leaves Node's module
 * cache, so a file that loads it registers its functions again. The stand-in for @azure/functions-core goes in first:
 * a file that imports the app's functions directly would otherwise put the worker's one copy of @azure/functions in
 * test mode for every later file that starts the local runtime. A file in FRESH_MODULES
 * (test/support/freshModuleFiles.ts) also gets a poolsync of its own: the Functions app's services are built once per
 * module graph from process.env, so vitest's graph of the sources is reset before it is imported.
 */
const ENV_KEY = Symbol.for("poolsync.test.workerEnv");
const g = globalThis as typeof globalThis & { [ENV_KEY]?: Record<string, string | undefined> };
const started = (g[ENV_KEY] ??= { ...process.env });
for (const key of Object.keys(process.env)) if (!(key in started)) delete process.env[key];
Object.assign(process.env, started);
installCoreStandIn();
forgetRegistrations();
const built = path.resolve("dist") + path.sep;
const cache = createRequire(path.resolve("package.json")).cache;
for (const key of Object.keys(cache)) if (key.startsWith(built)) delete cache[key];

const file = path
  .relative(process.cwd(), expect.getState().testPath ?? "")
  .split(path.sep)
  .join("/");
if (needsFreshModules(file)) vi.resetModules();
