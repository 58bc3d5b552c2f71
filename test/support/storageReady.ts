import { beforeAll } from "vitest";
import { azuritePortsOpen } from "../../devkit/azurite";
import { testStorageConnectionString } from "../../devkit/storage";

/**
 * Before a worker's first test, waits until the suite's Azurite listens (globalSetup starts its own without waiting,
 * so its start overlaps the workers' own; test/support/globalSetup.ts). Once per worker: after that the hook settles
 * at once. In beforeAll, not at the top, so the file's imports are done meanwhile.
 */
const READY_KEY = Symbol.for("poolsync.test.storageReady");
const g = globalThis as typeof globalThis & { [READY_KEY]?: Promise<void> };

function endpointPort(connectionString: string, name: string): number {
  const url = new RegExp(`${name}Endpoint=([^;]+)`).exec(connectionString)?.[1];
  if (url === undefined) throw new Error(`POOLSYNC_TEST_STORAGE has no ${name}Endpoint: ${connectionString}`);
  return Number(new URL(url).port);
}

async function waitForStorage(): Promise<void> {
  const cs = testStorageConnectionString();
  const ports = { blob: endpointPort(cs, "Blob"), queue: endpointPort(cs, "Queue"), table: endpointPort(cs, "Table") };
  const deadline = Date.now() + 30_000;
  while (!(await azuritePortsOpen(ports)).every(Boolean)) {
    if (Date.now() > deadline) {
      throw new Error(`the suite's Azurite (${ports.blob}/${ports.queue}/${ports.table}) did not listen within 30 s`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(() => (g[READY_KEY] ??= waitForStorage()), 40_000);
