import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { QueueClient } from "@azure/storage-queue";
import { loadConfig, type Config } from "../../src/config";
import { encodeMessage } from "../../src/azure/workQueue";
import { ensureAzurite, type AzuritePorts, type RunningAzurite } from "../../devkit/azurite";
import { freePorts } from "../../devkit/freePorts";
import { startArmSimulator, type ArmSimulator, type JsonObject, type SeedSpec, type SimControl } from "../../sim";
import { SIM_CA_FILE } from "../support/harness";
import { uniqueName } from "../../devkit/storage";
import { poolId, scaleSetId } from "../../devkit/worlds";
import type { SoakRun } from "./run";

// The soak's world: three Uniform scale sets, one Flexible scale set and four pools in scope, one scale set and pool
// outside it; the simulator time-scaled with throttling on, and an Azurite of its own (restartable, state on disk).

export const SOAK_SUBSCRIPTION = "33333333-4444-5555-6666-777777777777";
export const RG = "soak";
export const OUTSIDE_RG = "outside";
export const SCALE_SETS = ["vmss-0", "vmss-1", "vmss-2"];
export const POOLS = ["pool-0", "pool-1", "pool-2", "pool-3"];
export const SUBNET = `/subscriptions/${SOAK_SUBSCRIPTION}/resourceGroups/${RG}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`;
export const ssId = (name: string) => scaleSetId(SOAK_SUBSCRIPTION, RG, name);
export const pId = (name: string) => poolId(SOAK_SUBSCRIPTION, RG, "lb", name);
/** A Flexible scale set: declared by targetId; its VMs' membership lives on their NIC resources. */
export const FLEX = scaleSetId(SOAK_SUBSCRIPTION, RG, "flex-0");
export const OUTSIDE_SS = scaleSetId(SOAK_SUBSCRIPTION, OUTSIDE_RG, "ovmss");
export const OUTSIDE_POOL = poolId(SOAK_SUBSCRIPTION, OUTSIDE_RG, "olb", "opool");

function soakWorld(): SeedSpec {
  const group = (name: string, lb: string, pools: string[], sets: string[], capacity: number) => ({
    name,
    location: "westeurope",
    virtualNetworks: [
      { name: "vnet", addressPrefixes: ["10.0.0.0/8"], subnets: [{ name: "nodes", addressPrefix: "10.2.0.0/16" }] },
    ],
    loadBalancers: [{ name: lb, backendPools: pools }],
    scaleSets: sets.map((s) => ({
      name: s,
      capacity,
      nics: [
        {
          name: "nic-0",
          primary: true,
          ipConfigurations: [{ name: "ipConfig0", primary: true, subnet: "vnet/nodes" }],
        },
      ],
    })),
  });
  const inScope = group(RG, "lb", POOLS, SCALE_SETS, 2);
  const flex = {
    name: "flex-0",
    capacity: 2,
    orchestrationMode: "Flexible" as const,
    nics: [
      { name: "nic-0", primary: true, ipConfigurations: [{ name: "ipConfig0", primary: true, subnet: "vnet/nodes" }] },
    ],
  };
  return {
    subscriptions: [
      {
        id: SOAK_SUBSCRIPTION,
        resourceGroups: [
          { ...inScope, scaleSets: [...inScope.scaleSets, flex] },
          group(OUTSIDE_RG, "olb", ["opool"], ["ovmss"], 1),
        ],
      },
    ],
  };
}

/** The primary NIC of each live VM of the Flexible scale set (a VM being deleted has none to check). */
export function flexNics(c: SimControl): string[] {
  return c
    .virtualMachines(FLEX)
    .filter((v) => String((v.properties as JsonObject).provisioningState) !== "Deleting")
    .map(
      (v) =>
        (v.properties as { networkProfile: { networkInterfaces: { id: string }[] } }).networkProfile
          .networkInterfaces[0]?.id,
    )
    .filter((id): id is string => typeof id === "string");
}

/** The host's visibilityTimeout, short: a killed invocation's message comes back soon. */
export const VISIBILITY_S = 3;
export const MAX_DEQUEUE = 5;

export interface SoakWorld {
  sim: ArmSimulator;
  c: SimControl;
  config: Config;
  queue: QueueClient;
  poisonQueue: QueueClient;
  /** Simulated seconds per real second. */
  T: number;
  azurite: RunningAzurite | undefined;
  azuriteDown: boolean;
  restartAzurite(): Promise<void>;
  /** Azurite again when a restart left it down. */
  ensureAzurite(): Promise<void>;
  /** A producer's send: what fails while storage is down is kept to send again. */
  send(message: unknown): Promise<boolean>;
  sendRaw(text: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startWorld(run: SoakRun): Promise<SoakWorld> {
  const T = run.opts.timeScale ?? 60;
  const [blob, queuePort, table] = await freePorts(3);
  const ports: AzuritePorts = { blob: blob!, queue: queuePort!, table: table! };
  const dataDir = mkdtempSync(join(tmpdir(), "poolsync-soak-azurite-"));
  const azurite = await ensureAzurite(ports, { dataDir });
  const sim: ArmSimulator = await startArmSimulator({
    tls: true,
    seed: soakWorld(),
    timeScale: T,
    throttling: { timeScale: T },
    operationDurationMs: 3_000,
    latency: { fixedMs: 200, jitterMs: 800 },
    randomSeed: run.opts.seed,
  });

  const env: Record<string, string> = {
    POOLSYNC_SCOPES: `/subscriptions/${SOAK_SUBSCRIPTION}/resourceGroups/${RG}`,
    POOLSYNC_BINDINGS: "*",
    // One cache MAC key for every host of the run, as the template provisions it (a host's own key shares no rows).
    POOLSYNC_CACHE_KEY: `soak-cache-key-${run.opts.seed}-0123456789abcdef`,
    ARM_ENDPOINT: sim.url,
    POOLSYNC_ARM_CA_FILE: SIM_CA_FILE,
    AzureWebJobsStorage: azurite.connectionString,
    POOLSYNC_QUEUE: uniqueName("soak-"),
    POOLSYNC_MEMBERSHIPS_TABLE: uniqueName("soakm"),
    POOLSYNC_CACHE_TABLE: uniqueName("soakc"),
    // Short, in simulated time (the app's clock is the simulator's): a 2 s real ARM timeout is 120 simulated s.
    POOLSYNC_ARM_TIMEOUT_SECONDS: "2",
    // A pass writes only with a request timeout's worth of lease left (LeaseGuard): 120 simulated s here, so the lease
    // is longer than twice that.
    POOLSYNC_RECONCILE_LEASE_SECONDS: "300",
    // The slow-answer fault applies a write 3.5 real seconds (210 simulated) after it was sent: it stays in doubt longer.
    POOLSYNC_WRITE_DOUBT_SECONDS: "600",
    // This world deletes and recreates an instance in seconds (3 s operations); Azure takes minutes.
    POOLSYNC_INSTANCE_BODY_MAX_AGE_SECONDS: "5",
    POOLSYNC_OPERATION_POLL_SECONDS: "2",
    POOLSYNC_OPERATION_MAX_WAIT_SECONDS: "120",
    POOLSYNC_EVENT_DEBOUNCE_SECONDS: "10",
    POOLSYNC_CACHE_TTL_SECONDS: "600",
    POOLSYNC_FAILED_RETRY_SECONDS: "300",
    POOLSYNC_MAX_ATTEMPTS: "8",
  };
  const config: Config = loadConfig(env);
  const queue = new QueueClient(azurite.connectionString, config.queueName);
  const poisonQueue = new QueueClient(azurite.connectionString, config.poisonQueueName);

  const world: SoakWorld = {
    sim,
    c: sim.control,
    config,
    queue,
    poisonQueue,
    T,
    azurite,
    azuriteDown: false,
    async restartAzurite() {
      world.azuriteDown = true;
      const restart: { stopped: number; started?: number } = { stopped: Date.now() - run.startedAt };
      run.azuriteRestarts.push(restart);
      await world.azurite?.stop();
      world.azurite = undefined;
      await new Promise((r) => setTimeout(r, 500 + run.rand() * 1500));
      // A loaded machine may take longer than ensureAzurite's 30 s to bring it up: the platform tries again.
      for (let attempt = 1; world.azurite === undefined; attempt++) {
        try {
          world.azurite = await ensureAzurite(ports, { dataDir });
        } catch (err) {
          run.bump("platform:azurite-start-retried");
          if (attempt >= 3) throw err;
          // The killed attempt must be gone first, or its open ports would pass for an Azurite already running.
          await new Promise((r) => setTimeout(r, 1_000));
        }
      }
      restart.started = Date.now() - run.startedAt;
      world.azuriteDown = false;
    },
    async ensureAzurite() {
      world.azurite ??= await ensureAzurite(ports, { dataDir });
    },
    async send(message) {
      const requestId = (message as { requestId?: unknown }).requestId;
      const note = (what: string) => typeof requestId === "string" && run.note(requestId, what);
      try {
        const r = await queue.sendMessage(encodeMessage(message));
        note(`sent as message ${r.messageId}`);
        return true;
      } catch (err) {
        note(`send failed (${(err as Error)?.message?.slice(0, 60) ?? String(err)}); kept to send again`);
        run.unsent.push(message);
        run.bump("producer:send-failed");
        return false;
      }
    },
    async sendRaw(text) {
      await queue.sendMessage(Buffer.from(text, "utf8").toString("base64"));
    },
    async stop() {
      await sim.stop();
      await world.azurite?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return world;
}
