import { QueueClient } from "@azure/storage-queue";
import { loadConfig, type Config } from "../../src/config";
import { createServices, type ServiceOverrides, type Services } from "../../src/app/services";
import { memoryLogger } from "../../src/app/logger";
import type { Clock } from "../../src/core/ports";
import type { HandleOutcome } from "../../src/reconcile/handleQueueMessage";
import { DEMO_SUBSCRIPTION, startArmSimulator, type ArmSimulator, type ArmSimulatorOptions } from "../../sim";
import { SIM_CA_FILE } from "../../devkit/simulator";
import { decodeQueueBody } from "./queueBody";
import { outcomesOf, QueueDrain } from "../../local/stack/queueDrain";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import type { QueueHostOptions } from "../../local/host/hostConfig";

/** The demo world's IDs (made up, as the simulator's demo seed defines them). */
export const DEMO = {
  subscription: DEMO_SUBSCRIPTION,
  scaleSetId: `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/etag/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-0`,
  poolId: `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/etag/providers/Microsoft.Network/loadBalancers/etag-k8s/backendAddressPools/etag-k8s`,
  subnetId: `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/etag/providers/Microsoft.Network/virtualNetworks/etag-k8s-vnet/subnets/node-subnet`,
};

export { SIM_CA_FILE };

export interface Harness {
  sim: ArmSimulator;
  config: Config;
  services: Services;
  logs: ReturnType<typeof memoryLogger>;
  queue: QueueClient;
  poison: QueueClient;
  /** Puts a message on the work queue as a producer would (base64 JSON, as host.json expects). */
  send(message: unknown): Promise<void>;
  /**
   * Plays the queue trigger by the host's rules (local/stack/queueDrain.ts): takes visible messages in batches, runs
   * each batch concurrently, until none is left; the answers of the invocations that succeeded.
   */
  drain(opts?: { batchSize?: number; maxRounds?: number }): Promise<HandleOutcome[]>;
  /** Like drain, but also waits (up to timeoutMs) for messages that are on the queue but not visible yet. */
  drainUntilEmpty(timeoutMs: number): Promise<HandleOutcome[]>;
  /** How many messages are on the work queue, visible or not. */
  queueDepth(): Promise<number>;
  poisonMessages(): Promise<Array<{ reason: string; received: string }>>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  sim?: ArmSimulatorOptions;
  /** poolsync's clock (the simulator keeps its own). */
  clock?: Clock;
  /**
   * poolsync on the simulator's own clock: with a time-scaled simulator (`sim.throttling.timeScale`) CRP's minutes-long
   * windows pass in seconds for both alike.
   */
  simClock?: boolean;
  env?: Record<string, string>;
  cacheEnabled?: boolean;
  /** Extra Table pipeline policies (a test that plays a concurrent writer between two Table calls). */
  storagePolicies?: ServiceOverrides["storagePolicies"];
  /** Overrides of host.json's queue settings for drain (a failed message visible again at once: visibilityTimeoutMs 0). */
  hostQueues?: Partial<QueueHostOptions>;
}

/** Cache on or off for the whole suite (invariant 5: every test passes with it disabled, at more reads). */
export const SUITE_CACHE_ENABLED = process.env.POOLSYNC_TEST_CACHE !== "false";

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const sim = await startArmSimulator({ tls: true, seed: "demo", operationDurationMs: 20, ...opts.sim });
  const logs = memoryLogger();
  const env: Record<string, string> = {
    POOLSYNC_SCOPES: `/subscriptions/${DEMO_SUBSCRIPTION}`,
    POOLSYNC_BINDINGS: "*",
    ARM_ENDPOINT: sim.url,
    POOLSYNC_ARM_CA_FILE: SIM_CA_FILE,
    AzureWebJobsStorage: testStorageConnectionString(),
    POOLSYNC_QUEUE: uniqueName("q-"),
    POOLSYNC_MEMBERSHIPS_TABLE: uniqueName("m"),
    POOLSYNC_CACHE_TABLE: uniqueName("c"),
    POOLSYNC_CACHE_ENABLED: String(opts.cacheEnabled ?? SUITE_CACHE_ENABLED),
    POOLSYNC_OPERATION_POLL_SECONDS: "0.05",
    // Each declare message reconciles at once, so a test sees its report; test/integration/declareWindow.test.ts
    // and the local runtime's suites run the default window.
    POOLSYNC_DECLARE_WINDOW_SECONDS: "0",
    // Nor does a pass wait to gather (250 ms by default, a quarter of a second on every pass of the fast loop): the
    // tests of gathering set it (test/integration/ipPools.test.ts, leadingPass.test.ts, the coalescer's own).
    POOLSYNC_GATHER_MILLISECONDS: "0",
    // On the simulator's time-scaled clock a real second is many: the lease must outlast a request timeout there.
    ...(opts.simClock
      ? {
          POOLSYNC_ARM_TIMEOUT_SECONDS: "5",
          POOLSYNC_RECONCILE_LEASE_SECONDS: String(
            Math.ceil(2 * Number(opts.env?.POOLSYNC_ARM_TIMEOUT_SECONDS ?? 5) * sim.control.clock.timeScale) + 60,
          ),
        }
      : {}),
    ...opts.env,
  };
  const config = loadConfig(env);
  const onSim: Clock = {
    now: () => sim.control.clock.now(),
    sleep: (ms, signal) =>
      signal
        ? Promise.race([
            sim.control.clock.sleep(ms),
            new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true })),
          ])
        : sim.control.clock.sleep(ms),
  };
  const clock = opts.clock ?? (opts.simClock ? onSim : undefined);
  const services = createServices(config, {
    log: logs,
    random: () => 0.5,
    ...(clock ? { clock } : {}),
    ...(opts.simClock ? { timeScale: sim.control.clock.timeScale } : {}),
    ...(opts.storagePolicies ? { storagePolicies: opts.storagePolicies } : {}),
  });
  await services.ready();
  const queue = new QueueClient(testStorageConnectionString(), config.queueName);
  const poison = new QueueClient(testStorageConnectionString(), config.poisonQueueName);
  const decode = decodeQueueBody;
  const harness: Harness = {
    sim,
    config,
    services,
    logs,
    queue,
    poison,
    async send(message) {
      const text = typeof message === "string" ? message : JSON.stringify(message);
      await queue.sendMessage(Buffer.from(text, "utf8").toString("base64"));
    },
    async drain({ batchSize = 16, maxRounds = 50 } = {}) {
      const trigger = new QueueDrain(queue, poison, (body, meta) => services.handleQueueMessage(body, meta), {
        options: { ...opts.hostQueues, batchSize },
        log: (line) => logs.warn("host.queue", { line }),
      });
      return outcomesOf(await trigger.drain(maxRounds));
    },
    async drainUntilEmpty(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const outcomes: HandleOutcome[] = [];
      for (;;) {
        outcomes.push(...(await harness.drain()));
        if ((await queue.getProperties()).approximateMessagesCount === 0) return outcomes;
        if (Date.now() > deadline) throw new Error(`queue still holds messages after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async queueDepth() {
      return (await queue.getProperties()).approximateMessagesCount ?? 0;
    },
    async poisonMessages() {
      const got = await poison.peekMessages({ numberOfMessages: 32 });
      return got.peekedMessageItems.map((m) => decode(m.messageText) as { reason: string; received: string });
    },
    async stop() {
      await services.coalescer.idle();
      await sim.stop();
    },
  };
  return harness;
}

/** A clock the test moves by hand; a sleep moves it at once (sleeps only pace retries), unless it stands still. */
export function manualClock(start = Date.parse("2026-12-02T10:00:00Z")): Clock & {
  advance(ms: number): void;
  /** Runs `work` with time standing still: its sleeps wait real time and move nothing (see below). */
  standingStill<T>(work: () => Promise<T>): Promise<T>;
} {
  let now = start;
  // Polls of an operation the simulator completes in real time sleep as often as real time takes: while a test needs
  // the clock where it put it, those sleeps wait real milliseconds instead of moving the clock by a load-dependent sum.
  let still = 0;
  // A sleep with an abort signal is a background timer (the lease renewal): it waits for time to pass, and does not
  // itself move time, or it would race the clock forward while the pass it serves runs.
  const background: Array<{ at: number; wake: () => void }> = [];
  const moveTo = (t: number) => {
    now = t;
    for (const w of background.filter((w) => w.at <= now)) {
      background.splice(background.indexOf(w), 1);
      w.wake();
    }
  };
  return {
    now: () => now,
    sleep: async (ms, signal) => {
      if (!signal) {
        if (still > 0) return new Promise<void>((r) => setTimeout(r, ms));
        return moveTo(now + ms);
      }
      if (signal.aborted) return;
      await new Promise<void>((wake) => {
        const w = { at: now + ms, wake };
        background.push(w);
        signal.addEventListener(
          "abort",
          () => (background.includes(w) && background.splice(background.indexOf(w), 1), wake()),
          { once: true },
        );
      });
    },
    advance: (ms) => moveTo(now + ms),
    standingStill: async (work) => {
      still += 1;
      try {
        return await work();
      } finally {
        still -= 1;
      }
    },
  };
}
