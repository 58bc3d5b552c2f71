import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { loadRegisteredFunctions, type RegisteredFunction } from "../../local/host/loadFunctions";
import { APP_DIR, FIXTURE_GLOB, readRecords, recordFile } from "./support";

const run = promisify(execFile);

describe("loadRegisteredFunctions on the fixture app", () => {
  let fns: RegisteredFunction[];
  const byName = (n: string) => {
    const f = fns.find((x) => x.name === n);
    if (!f) throw new Error(`no ${n}`);
    return f;
  };

  beforeAll(() => {
    fns = loadRegisteredFunctions({ entryGlob: FIXTURE_GLOB, appDir: APP_DIR, log: () => undefined });
  });

  it("captures every app.* registration with the metadata the host reads", () => {
    expect(fns.map((f) => f.name).sort()).toEqual([
      "fixtureEvents",
      "fixtureHello",
      "fixtureItem",
      "fixtureQueue",
      "fixtureStartupTimer",
      "fixtureTimer",
    ]);
    expect(byName("fixtureQueue").trigger).toMatchObject({
      type: "queueTrigger",
      direction: "in",
      queueName: "%FIXTURE_QUEUE%",
      connection: "AzureWebJobsStorage",
    });
    expect(byName("fixtureTimer").trigger).toMatchObject({ type: "timerTrigger", schedule: "%FIXTURE_SCHEDULE%" });
    expect(byName("fixtureEvents").trigger).toMatchObject({ type: "eventGridTrigger", direction: "in" });
    expect(byName("fixtureItem").trigger).toMatchObject({
      type: "httpTrigger",
      authLevel: "function",
      methods: ["GET", "PUT"],
      route: "items/{id}",
    });
    // The library's defaults for app.get: anonymous, the one method, no route (so the function name).
    expect(byName("fixtureHello").trigger).toMatchObject({
      type: "httpTrigger",
      authLevel: "anonymous",
      methods: ["GET"],
    });
    expect(byName("fixtureHello").trigger.route).toBeUndefined();
    expect(byName("fixtureQueue").sourceFile).toBe(join(APP_DIR, "dist/test/local/fixtures/queueFunction.js"));
  });

  it("rawBindings are what the worker sends the host: one JSON string per binding, name included", () => {
    const raw = byName("fixtureItem").rawBindings.map((s) => JSON.parse(s) as Record<string, unknown>);
    expect(raw).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "httpTrigger", direction: "in", authLevel: "function", route: "items/{id}" }),
        expect.objectContaining({ name: "$return", type: "http", direction: "out" }),
      ]),
    );
  });

  it("invoke goes through the library: a JSON string input arrives parsed, metadata camel-cased", async () => {
    const file = recordFile();
    process.env.LOCAL_FIXTURE_RECORD_FILE = file;
    const q = byName("fixtureQueue");
    const res = await q.invoke({
      inputData: [{ name: q.trigger.name, data: { string: '{"n":1}' } }],
      triggerMetadata: { DequeueCount: { json: "3" } },
    });
    expect(res.invocationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(readRecords(file)).toEqual([
      expect.objectContaining({ input: { n: 1 }, inputType: "object", triggerMetadata: { dequeueCount: 3 } }),
    ]);
  });

  it("a second load in the same process returns the same functions (modules are cached, registrations are not lost)", () => {
    expect(
      loadRegisteredFunctions({ entryGlob: FIXTURE_GLOB, appDir: APP_DIR })
        .map((f) => f.name)
        .sort(),
    ).toEqual(fns.map((f) => f.name).sort());
  });

  it("an entry glob that matches nothing fails", () => {
    expect(() => loadRegisteredFunctions({ entryGlob: "dist/nowhere/*.js", appDir: APP_DIR })).toThrow(
      /No entry points match "dist\/nowhere\/\*\.js"/,
    );
  });
});

// These need a process where the stand-in was not installed first, so they run in a child.
describe("registrations made before the stand-in fail loudly", () => {
  const loader = JSON.stringify(join(APP_DIR, "dist/local/host/loadFunctions.js"));
  const child = (prelude: string) =>
    run(
      process.execPath,
      [
        "-e",
        `${prelude}
         try { require(${loader}).loadRegisteredFunctions({ entryGlob: ${JSON.stringify(FIXTURE_GLOB)}, appDir: ${JSON.stringify(APP_DIR)} }); console.log("LOADED"); }
         catch (e) { console.log("ERROR: " + e.message); }`,
      ],
      { cwd: APP_DIR },
    );

  it("an entry point loaded before the stand-in", async () => {
    const { stdout } = await child(
      `require(${JSON.stringify(join(APP_DIR, "dist/test/local/fixtures/queueFunction.js"))});`,
    );
    expect(stdout).toMatch(
      /ERROR: These entry points were loaded before the local runtime's @azure\/functions-core stand-in.*queueFunction\.js/,
    );
  });

  it("@azure/functions used (and so in test mode) before the stand-in", async () => {
    const { stdout } = await child(`require("@azure/functions").app.get("early", () => ({}));`);
    expect(stdout).toMatch(
      /ERROR: @azure\/functions \(.*\) was used before the local runtime installed its @azure\/functions-core stand-in, so it is in "test mode"/,
    );
  });
});

// One app after another in one process (the unisolated test workers: test/support/freshModules.ts), in a child.
describe("forgetRegistrations", () => {
  const host = (m: string) => JSON.stringify(join(APP_DIR, `dist/local/host/${m}.js`));
  const loadAgain = (forget: boolean) =>
    run(
      process.execPath,
      [
        "-e",
        `const { loadRegisteredFunctions } = require(${host("loadFunctions")});
         const { forgetRegistrations } = require(${host("coreStandIn")});
         const load = () => loadRegisteredFunctions({ entryGlob: ${JSON.stringify(FIXTURE_GLOB)}, appDir: ${JSON.stringify(APP_DIR)} }).map((f) => f.name).sort().join(",");
         const first = load();
         ${forget ? "forgetRegistrations();" : ""}
         for (const k of Object.keys(require.cache)) if (k.includes("/fixtures/")) delete require.cache[k];
         try { console.log(first === load() ? "SAME" : "DIFFERENT"); } catch (e) { console.log("ERROR: " + e.message); }`,
      ],
      { cwd: APP_DIR },
    );

  it("lets the same app load afresh: its functions register again, the same ones", async () => {
    expect((await loadAgain(true)).stdout.trim()).toBe("SAME");
  });

  it("without it, a fresh load of the same app is refused: its names are taken", async () => {
    expect((await loadAgain(false)).stdout).toMatch(/ERROR: .*is already registered/);
  });
});
