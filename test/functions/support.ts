import { QueueClient } from "@azure/storage-queue";
import { DEMO_SUBSCRIPTION, startArmSimulator, type ArmSimulator } from "../../sim";
import { SIM_CA_FILE } from "../support/harness";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";

/**
 * What a handler in src/functions/ runs against when a test calls it directly: the app settings in process.env
 * (as the host gives them), the simulator for ARM and the suite's Azurite, with tables and queues of its own.
 * Set before the first call, since the handlers build their services from the environment once per process.
 */
export interface FunctionWorld {
  sim: ArmSimulator;
  queue: QueueClient;
  stop(): Promise<void>;
}

export async function startFunctionWorld(env: Record<string, string> = {}): Promise<FunctionWorld> {
  const sim = await startArmSimulator({ tls: true, seed: "demo", operationDurationMs: 20 });
  const queueName = uniqueName("q-");
  Object.assign(process.env, {
    POOLSYNC_SCOPES: `/subscriptions/${DEMO_SUBSCRIPTION}`,
    POOLSYNC_BINDINGS: "*",
    ARM_ENDPOINT: sim.url,
    POOLSYNC_ARM_CA_FILE: SIM_CA_FILE,
    POOLSYNC_ARM_CREDENTIAL: "static",
    AzureWebJobsStorage: testStorageConnectionString(),
    POOLSYNC_QUEUE: queueName,
    POOLSYNC_MEMBERSHIPS_TABLE: uniqueName("m"),
    POOLSYNC_CACHE_TABLE: uniqueName("c"),
    POOLSYNC_OPERATION_POLL_SECONDS: "0.05",
    POOLSYNC_DECLARE_WINDOW_SECONDS: "0",
    POOLSYNC_GATHER_MILLISECONDS: "0",
    // The handlers are called with the header as the platform sets it (signedIn below).
    POOLSYNC_PRINCIPAL_STRIPPED_BY: "the test, which plays App Service authentication",
    ...env,
  });
  return { sim, queue: new QueueClient(testStorageConnectionString(), queueName), stop: () => sim.stop() };
}

/**
 * The header App Service authentication adds to a signed-in caller's request (base64 JSON of the token's claims),
 * as the deployed app receives it: the handlers run with POOLSYNC_AUTH=entra, the default.
 */
export function signedIn(
  roles: string[],
  name = "Test Caller",
  id = "00000000-aaaa-bbbb-cccc-000000000001",
): Record<string, string> {
  const claims = [
    { typ: "http://schemas.microsoft.com/identity/claims/objectidentifier", val: id },
    { typ: "name", val: name },
    ...roles.map((val) => ({ typ: "roles", val })),
  ];
  return {
    "x-ms-client-principal": Buffer.from(
      JSON.stringify({ auth_typ: "aad", name_typ: "name", role_typ: "roles", claims }),
    ).toString("base64"),
  };
}
