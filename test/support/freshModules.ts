import { createRequire } from "node:module";
import path from "node:path";
import { expect, vi } from "vitest";
import { forgetRegistrations, installCoreStandIn } from "../../local/host/coreStandIn";
import { needsFreshModules } from "./freshModuleFiles";

/**
 * The fast files run unisolated: a worker keeps the Azure SDKs and Node's other externals imported once, and the
 * sources one file imported stay for the next. A file in FRESH_MODULES (test/support/freshModuleFiles.ts) gets a
 * poolsync of its own: the Functions app's services are built once per module graph from process.env, and each such
 * file sets its own. So before it is imported, vitest's graph of the sources is reset, and the built app that the local
 * runtime loads by `require` (dist/) leaves Node's module cache. Before every file, the runtime's registry of
 * functions (per process, as the worker's is) forgets the last file's app, which registers again when loaded, and
 * process.env is the worker's as it started: each file sets the app's settings of its own. The stand-in for
 * @azure/functions-core goes in first: a file that imports the app's functions directly would otherwise put the
 * worker's one copy of @azure/functions in test mode for every later file that starts the local runtime.
 */
const ENV_KEY = Symbol.for("poolsync.test.workerEnv");
const g = globalThis as typeof globalThis & { [ENV_KEY]?: Record<string, string | undefined> };
const started = (g[ENV_KEY] ??= { ...process.env });
for (const key of Object.keys(process.env)) if (!(key in started)) delete process.env[key];
Object.assign(process.env, started);
installCoreStandIn();
forgetRegistrations();

const file = path
  .relative(process.cwd(), expect.getState().testPath ?? "")
  .split(path.sep)
  .join("/");
if (needsFreshModules(file)) {
  vi.resetModules();
  const built = path.resolve("dist") + path.sep;
  const cache = createRequire(path.resolve("package.json")).cache;
  for (const key of Object.keys(cache)) if (key.startsWith(built)) delete cache[key];
}
