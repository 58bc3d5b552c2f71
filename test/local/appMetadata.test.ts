import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { httpAuthLevel, SETTINGS } from "../../src/config";
import { loadRegisteredFunctions, type RegisteredFunction } from "../../local/host/loadFunctions";

/**
 * The app's functions as the Functions host reads them: what the built entry points (package.json's `main`, which
 * `func start` and Azure load too) register through @azure/functions. A change here changes what Azure runs.
 */

const APP_DIR = join(__dirname, "..", "..");
const MAIN = (JSON.parse(readFileSync(join(APP_DIR, "package.json"), "utf8")) as { main: string }).main;

describe("the app's registered functions (what the host indexes)", () => {
  let fns: RegisteredFunction[];
  const byName = (name: string) => {
    const f = fns.find((x) => x.name === name);
    if (!f)
      throw new Error(`the app registers no function "${name}" (it registers: ${fns.map((x) => x.name).join(", ")})`);
    return f;
  };
  const raw = (f: RegisteredFunction) => f.rawBindings.map((s) => JSON.parse(s) as Record<string, unknown>);

  beforeAll(() => {
    fns = loadRegisteredFunctions({ entryGlob: MAIN, appDir: APP_DIR, log: () => undefined });
  });

  it("package.json's main is the built functions folder, one file per function", () => {
    expect(MAIN).toBe("dist/src/functions/*.js");
    for (const f of fns) expect(f.sourceFile).toBe(join(APP_DIR, "dist/src/functions", `${f.name}.js`));
  });

  it("applyBackendPools: a queue trigger on %POOLSYNC_QUEUE% over AzureWebJobsStorage", () => {
    const f = byName("applyBackendPools");
    expect(f.trigger).toMatchObject({
      type: "queueTrigger",
      direction: "in",
      queueName: "%POOLSYNC_QUEUE%",
      connection: "AzureWebJobsStorage",
    });
    expect(raw(f)).toEqual([
      expect.objectContaining({
        type: "queueTrigger",
        direction: "in",
        queueName: "%POOLSYNC_QUEUE%",
        connection: "AzureWebJobsStorage",
      }),
    ]);
  });

  it("reconcileStale: a timer on %POOLSYNC_RECONCILE_SCHEDULE%, not run at startup", () => {
    const f = byName("reconcileStale");
    expect(f.trigger).toMatchObject({
      type: "timerTrigger",
      direction: "in",
      schedule: "%POOLSYNC_RECONCILE_SCHEDULE%",
      runOnStartup: false,
    });
    expect(raw(f)).toEqual([
      expect.objectContaining({ type: "timerTrigger", schedule: "%POOLSYNC_RECONCILE_SCHEDULE%", runOnStartup: false }),
    ]);
  });

  it("onResourceEvent: an Event Grid trigger", () => {
    const f = byName("onResourceEvent");
    expect(f.trigger).toMatchObject({ type: "eventGridTrigger", direction: "in" });
    expect(raw(f)).toEqual([expect.objectContaining({ type: "eventGridTrigger", direction: "in" })]);
  });

  it("memberships and status: HTTP triggers behind App Service authentication (no host key), the app checking roles", () => {
    expect(process.env.POOLSYNC_AUTH ?? "").toBe("");
    const memberships = byName("memberships");
    expect(memberships.trigger).toMatchObject({
      type: "httpTrigger",
      authLevel: "anonymous",
      route: "memberships/{action?}",
    });
    expect(memberships.trigger.methods).toEqual(expect.arrayContaining(["GET", "PUT"]));
    expect(byName("status").trigger).toMatchObject({
      type: "httpTrigger",
      authLevel: "anonymous",
      route: "status",
      methods: ["GET", "PUT", "POST", "PATCH", "DELETE"],
    });
    for (const f of [memberships, byName("status")])
      expect(raw(f)).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: "$return", type: "http", direction: "out" })]),
      );
  });

  it("no other function; the host's key check comes back only with the key fallback (POOLSYNC_AUTH=key)", () => {
    expect(fns.map((f) => f.name).sort()).toEqual([
      "applyBackendPools",
      "history",
      "memberships",
      "onResourceEvent",
      "plan",
      "reconcileStale",
      "status",
    ]);
    expect(httpAuthLevel({ POOLSYNC_AUTH: "key" })).toBe("function");
    expect(httpAuthLevel({ POOLSYNC_AUTH: " Key " })).toBe("function");
    expect(httpAuthLevel({ POOLSYNC_AUTH: "entra" })).toBe("anonymous");
    expect(httpAuthLevel({})).toBe("anonymous");
  });

  it("every %SETTING% a binding names is a setting the code knows (so the infra template sets it)", () => {
    const named = fns.flatMap((f) =>
      f.rawBindings.flatMap((s) => [...s.matchAll(/%([^%]+)%/g)].map((m) => m[1] as string)),
    );
    expect(named.sort()).toEqual(["POOLSYNC_QUEUE", "POOLSYNC_RECONCILE_SCHEDULE"]);
    for (const n of named) expect(Object.keys(SETTINGS)).toContain(n);
  });
});
