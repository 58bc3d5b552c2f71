import { TableClient } from "@azure/data-tables";
import { QueueClient } from "@azure/storage-queue";
import { startLocalRuntime, type LocalRuntime } from "../../local/host/runtime";
import { DEMO, SIM_CA_FILE } from "../support/harness";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { startArmSimulator, type ArmSimulator, type SeedSpec } from "../../sim";
import { loadConfig } from "../../src/config";
import { targetStoreFromConfig } from "../../src/app/services";
import { memoryLogger } from "../../src/app/logger";
import { TargetCache } from "../../src/azure/targets/targetCache";
import { ResourceOwnerTable } from "../../src/azure/resourceOwnerTable";
import type { TargetStore } from "../../src/azure/targets/targetStore";

/** The app's real entry points, built (npm test builds first), run by the local runtime over real HTTP. */
export const APP_GLOB = "dist/src/functions/*.js";
export const APP_DIR = `${__dirname}/../..`;

export interface IntakeApp {
  rt: LocalRuntime;
  url: string;
  sim: ArmSimulator | undefined;
  settings: Record<string, string>;
  queue: QueueClient;
  poison: QueueClient;
  memberships: TableClient;
  cache: TableClient;
  /** The app's JSON log lines (services log to console.log), kept here instead of flooding the test output. */
  appLogs: Array<Record<string, unknown>>;
  /** The work queue's messages, decoded (peek: they stay there). */
  peekQueue(): Promise<unknown[]>;
  membershipRows(): Promise<Array<Record<string, unknown>>>;
  stop(): Promise<void>;
}

export interface IntakeAppOptions {
  /** Start the ARM simulator (demo seed) and let the runtime's queue trigger reconcile against it. */
  reconcile?: boolean;
  /** The simulator's world; default the demo seed. */
  seed?: "demo" | SeedSpec;
  env?: Record<string, string>;
}

function decode(text: string): unknown {
  const raw = Buffer.from(text, "base64").toString("utf8");
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/**
 * One runtime per test file: the runtime puts settings into process.env and the app's services are a process
 * singleton, so two in one process would share them. The timer never runs; the queue trigger only when asked.
 */
export async function startIntakeApp(opts: IntakeAppOptions = {}): Promise<IntakeApp> {
  const appLogs = captureAppLogs();
  const sim = opts.reconcile
    ? await startArmSimulator({ tls: true, seed: opts.seed ?? "demo", operationDurationMs: 20 })
    : undefined;
  const settings: Record<string, string> = {
    AzureWebJobsStorage: testStorageConnectionString(),
    POOLSYNC_SCOPES: `/subscriptions/${DEMO.subscription}`,
    POOLSYNC_BINDINGS: "*",
    // Without the simulator nothing may call ARM: a closed port makes any attempt fail loudly.
    ARM_ENDPOINT: sim?.url ?? "https://127.0.0.1:9",
    POOLSYNC_ARM_CA_FILE: SIM_CA_FILE,
    POOLSYNC_QUEUE: uniqueName("iq-"),
    POOLSYNC_MEMBERSHIPS_TABLE: uniqueName("im"),
    POOLSYNC_CACHE_TABLE: uniqueName("ic"),
    POOLSYNC_OPERATION_POLL_SECONDS: "0.05",
    POOLSYNC_EVENT_DEBOUNCE_SECONDS: "0",
    // Nor does a pass wait to gather or for a declare window (as in test/support/harness.ts): a declaration on a scale
    // set declared on moments before would wait the 2 s window. test/intake/declareWindow.test.ts sets its own.
    POOLSYNC_GATHER_MILLISECONDS: "0",
    POOLSYNC_DECLARE_WINDOW_SECONDS: "0",
    // The key fallback: these suites are about the API's answers; test/intake/auth.test.ts runs Entra ID and roles.
    POOLSYNC_AUTH: "key",
    // The timer stays off (and its schedule far away) so that only the test decides when anything is re-read.
    POOLSYNC_RECONCILE_SCHEDULE: "0 0 0 1 1 *",
    "AzureWebJobs.reconcileStale.Disabled": "true",
    ...(opts.reconcile ? {} : { "AzureWebJobs.applyBackendPools.Disabled": "true" }),
    ...opts.env,
  };
  const rt = await startLocalRuntime({
    testPrincipals: true,
    webhookKey: INTAKE_WEBHOOK_KEY,
    appDir: APP_DIR,
    entryGlob: APP_GLOB,
    settings,
    port: 0,
    timerStatus: "memory",
    queues: {
      maxPollingIntervalMs: 200,
      visibilityTimeoutMs: 0,
      maxDequeueCount: 2,
      batchSize: 8,
      newBatchThreshold: 4,
    },
    // The app logs through each invocation's context (src/app/invocationHook.ts): its JSON lines arrive here.
    log: (e) => {
      if (e.message.startsWith('{"ts":')) console.log(e.message);
    },
    print: false,
  });
  const cs = testStorageConnectionString();
  const queue = new QueueClient(cs, settings.POOLSYNC_QUEUE!);
  const poison = new QueueClient(cs, `${settings.POOLSYNC_QUEUE!}-poison`);
  const memberships = TableClient.fromConnectionString(cs, settings.POOLSYNC_MEMBERSHIPS_TABLE!, {
    allowInsecureConnection: true,
  });
  const cache = TableClient.fromConnectionString(cs, settings.POOLSYNC_CACHE_TABLE!, { allowInsecureConnection: true });
  return {
    rt,
    url: rt.url,
    sim,
    settings,
    appLogs,
    queue,
    poison,
    memberships,
    cache,
    async peekQueue() {
      try {
        const got = await queue.peekMessages({ numberOfMessages: 32 });
        return got.peekedMessageItems.map((m) => decode(m.messageText));
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode === 404) return [];
        throw err;
      }
    },
    async membershipRows() {
      const out: Array<Record<string, unknown>> = [];
      try {
        // The declaration rows of every target's partition (their keys start with the encoded "/" of a pool ID).
        for await (const row of memberships.listEntities({
          queryOptions: { filter: "RowKey ge '%' and RowKey lt '&'" },
        }))
          out.push(row);
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode !== 404) throw err;
      }
      return out;
    },
    async stop() {
      await rt.stop();
      await sim?.stop();
    },
  };
}

/**
 * Lines the app's jsonLogger prints (console.log, .warn, .error by level) are captured; anything else still reaches the
 * console.
 */
function captureAppLogs(): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = [];
  for (const method of ["log", "warn", "error"] as const) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]) => {
      const first = args[0];
      if (args.length === 1 && typeof first === "string" && first.startsWith('{"ts":')) {
        try {
          lines.push(JSON.parse(first) as Record<string, unknown>);
          return;
        } catch {
          // not one of ours after all
        }
      }
      original(...args);
    };
  }
  return lines;
}

export async function waitFor<T>(
  probe: () => Promise<T>,
  ok: (v: T) => boolean,
  what: string,
  timeoutMs = 40_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v).slice(0, 6000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A caller as App Service authentication would present it, through the local runtime's test principal header. */
/** The Event Grid webhook's key of these runtimes (the local runtime requires one). */
export const INTAKE_WEBHOOK_KEY = "intake-webhook-key";

export const asPrincipal = (id: string, name: string, roles: string[]) => ({
  "x-test-client-principal": JSON.stringify({ id, name, roles }),
});

export const json = (body: unknown): RequestInit => ({
  method: "PUT",
  headers: { "content-type": "application/json" },
  body: typeof body === "string" ? body : JSON.stringify(body),
});

/** Fixtures both HTTP suites (ordinary and hostile input) declare against. */
export const OTHER_SUB = "99999999-2222-3333-4444-555555555555";
export const DEMO_PROVIDERS = `/subscriptions/${DEMO.subscription}/resourceGroups/etag/providers`;
export const VALID_DECLARATION = { scaleSetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" };

/**
 * The app's targets table as its cache (rows and stale marks; models read with this process's key do not verify, so
 * they read as misses), for suites that look at what the running app stored.
 */
export function targetsOf(app: IntakeApp): { store: TargetStore; cache: TargetCache } {
  const config = loadConfig({ ...app.settings, POOLSYNC_CACHE_ENABLED: "true" });
  const store = targetStoreFromConfig(config, { log: memoryLogger() });
  return { store, cache: new TargetCache(store, new ResourceOwnerTable(app.cache)) };
}
