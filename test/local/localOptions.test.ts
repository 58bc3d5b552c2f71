import { describe, expect, it } from "vitest";
import { DEMO_SCOPE, resolveLocalOptions } from "../../local/stack/localOptions";
import type { LoadedSettings } from "../../local/host/settings";

const APP = "/app";
const example: LoadedSettings = {
  source: "/app/local.settings.example.json",
  values: {
    AzureWebJobsStorage: "UseDevelopmentStorage=true",
    POOLSYNC_SCOPES: DEMO_SCOPE,
    ARM_ENDPOINT: "https://127.0.0.1:18443",
    POOLSYNC_ARM_CREDENTIAL: "static",
    POOLSYNC_ARM_CA_FILE: "sim/tls/cert.pem",
    POOLSYNC_QUEUE: "backendpool-updates",
  },
};

describe("resolveLocalOptions", () => {
  it("defaults: 7071, the simulator on 18443 with events after 1 s, Azurite on 10000-10002 in memory", () => {
    const o = resolveLocalOptions([], {}, example, APP);
    expect(o).toMatchObject({
      runtimePort: 7071,
      simulator: { port: 18443 },
      events: { delayMs: 1000 },
      azurite: { ports: { blob: 10000, queue: 10001, table: 10002 }, dataDir: undefined },
    });
    expect(o.settings).toMatchObject({
      ARM_ENDPOINT: "https://127.0.0.1:18443",
      POOLSYNC_ARM_CA_FILE: "/app/sim/tls/cert.pem",
      POOLSYNC_SCOPES: DEMO_SCOPE,
      AzureWebJobsStorage: "UseDevelopmentStorage=true",
    });
  });

  it("flags beat settings, settings beat defaults; --flag=value works too", () => {
    const o = resolveLocalOptions(
      ["--port=8080", "--sim-port", "19443", "--queue-port", "20001", "--data", "/tmp/az", "--event-delay-ms", "0"],
      { POOLSYNC_LOCAL_PORT: "9090", POOLSYNC_LOCAL_BLOB_PORT: "20000" },
      example,
      APP,
    );
    expect(o).toMatchObject({
      runtimePort: 8080,
      simulator: { port: 19443 },
      events: { delayMs: 0 },
      azurite: { ports: { blob: 20000, queue: 20001, table: 10002 }, dataDir: "/tmp/az" },
    });
    expect(o.settings.ARM_ENDPOINT).toBe("https://127.0.0.1:19443");
  });

  it("the environment wins over the settings file, as under func start", () => {
    const o = resolveLocalOptions([], { POOLSYNC_QUEUE: "mine" }, example, APP);
    expect(o.settings).toMatchObject({ POOLSYNC_QUEUE: "mine" });
  });

  it("in local mode POOLSYNC_SCOPES defaults to the demo subscription", () => {
    const o = resolveLocalOptions([], {}, { source: undefined, values: {} }, APP);
    expect(o.settings).toMatchObject({
      POOLSYNC_SCOPES: DEMO_SCOPE,
      POOLSYNC_ARM_CREDENTIAL: "static",
      ARM_ENDPOINT: "https://127.0.0.1:18443",
      AzureWebJobsStorage: "UseDevelopmentStorage=true",
    });
  });

  it("real ARM: no simulator, no events, the example's simulator settings dropped, POOLSYNC_SCOPES required", () => {
    expect(() => resolveLocalOptions([], { ARM_ENDPOINT: "https://management.azure.com" }, example, APP)).toThrow(
      /set POOLSYNC_SCOPES/,
    );
    const scope = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg";
    const o = resolveLocalOptions(
      [],
      { ARM_ENDPOINT: "https://management.azure.com", POOLSYNC_SCOPES: scope },
      example,
      APP,
    );
    expect(o.simulator).toBeUndefined();
    expect(o.events).toBeUndefined();
    expect(o.settings.POOLSYNC_SCOPES).toBe(scope);
    expect(o.settings.POOLSYNC_ARM_CREDENTIAL).toBeUndefined();
    expect(o.settings.POOLSYNC_ARM_CA_FILE).toBeUndefined();
    expect(() =>
      resolveLocalOptions(
        ["--sim-port", "1"],
        { ARM_ENDPOINT: "https://management.azure.com", POOLSYNC_SCOPES: scope },
        example,
        APP,
      ),
    ).toThrow(/no simulator is started/);
  });

  it("a real storage connection string: no Azurite", () => {
    const o = resolveLocalOptions(
      [],
      {
        AzureWebJobsStorage:
          "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=eA==;EndpointSuffix=core.windows.net",
      },
      example,
      APP,
    );
    expect(o.azurite).toBeUndefined();
  });

  it("--event-grid-seed (or POOLSYNC_LOCAL_EVENT_GRID_SEED) delivers as Event Grid does, planned by that seed", () => {
    expect(resolveLocalOptions(["--event-grid-seed", "42"], {}, example, APP).events).toEqual({
      delayMs: 1000,
      eventGridSeed: 42,
    });
    expect(resolveLocalOptions([], { POOLSYNC_LOCAL_EVENT_GRID_SEED: "7" }, example, APP).events).toEqual({
      delayMs: 1000,
      eventGridSeed: 7,
    });
    expect(() => resolveLocalOptions(["--event-grid-seed", "x"], {}, example, APP)).toThrow(
      /--event-grid-seed \/ POOLSYNC_LOCAL_EVENT_GRID_SEED must be a whole number, got "x"/,
    );
    expect(() => resolveLocalOptions(["--no-events", "--event-grid-seed", "1"], {}, example, APP)).toThrow(
      /--event-grid-seed: no events are delivered/,
    );
  });

  it("--no-events or POOLSYNC_LOCAL_EVENTS=false turns delivery off", () => {
    expect(resolveLocalOptions(["--no-events"], {}, example, APP).events).toBeUndefined();
    expect(resolveLocalOptions([], { POOLSYNC_LOCAL_EVENTS: "false" }, example, APP).events).toBeUndefined();
  });

  it("refuses what it cannot use, naming it", () => {
    expect(() => resolveLocalOptions(["--bogus"], {}, example, APP)).toThrow(
      /^Unknown option '--bogus'[\s\S]*\nusage: npm run local/,
    );
    expect(() => resolveLocalOptions(["--port"], {}, example, APP)).toThrow(
      /^Option '--port <value>' argument missing[\s\S]*\nusage: npm run local/,
    );
    expect(() => resolveLocalOptions(["--port="], {}, example, APP)).toThrow(/^--port needs a value/);
    expect(() => resolveLocalOptions(["--port", "--no-events"], {}, example, APP)).toThrow(
      /^Option '--port' argument is ambiguous/,
    );
    expect(() => resolveLocalOptions(["--no-events=yes"], {}, example, APP)).toThrow(
      /^Option '--no-events' does not take an argument/,
    );
    expect(() => resolveLocalOptions(["7071"], {}, example, APP)).toThrow(/^Unexpected argument '7071'/);
    expect(() => resolveLocalOptions(["--port", "70000"], {}, example, APP)).toThrow(
      /--port \/ POOLSYNC_LOCAL_PORT must be a port number/,
    );
    expect(() => resolveLocalOptions(["--blob-port", "10001"], {}, example, APP)).toThrow(/must differ/);
    expect(() => resolveLocalOptions(["--event-delay-ms=-1"], {}, example, APP)).toThrow(/whole milliseconds/);
  });

  it("--hosts N runs N hosts (1 by default); --throttling turns on the simulator's buckets; both refuse nonsense", () => {
    expect(resolveLocalOptions([], {}, example, APP)).toMatchObject({ hosts: 1, throttling: false });
    expect(resolveLocalOptions(["--hosts", "3", "--throttling"], {}, example, APP)).toMatchObject({
      hosts: 3,
      throttling: true,
    });
    expect(
      resolveLocalOptions([], { POOLSYNC_LOCAL_HOSTS: "2", POOLSYNC_LOCAL_THROTTLING: "true" }, example, APP),
    ).toMatchObject({
      hosts: 2,
      throttling: true,
    });
    expect(() => resolveLocalOptions(["--hosts", "0"], {}, example, APP)).toThrow(
      /--hosts \/ POOLSYNC_LOCAL_HOSTS must be a whole number of hosts \(1-16\), got "0"/,
    );
    expect(() =>
      resolveLocalOptions(
        ["--throttling"],
        { ARM_ENDPOINT: "https://management.azure.com", POOLSYNC_SCOPES: DEMO_SCOPE },
        example,
        APP,
      ),
    ).toThrow(/--throttling: ARM_ENDPOINT is https:\/\/management.azure.com/);
  });
});
