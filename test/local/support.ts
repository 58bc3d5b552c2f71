import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { QueueServiceClient } from "@azure/storage-queue";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";

/** The fixture app's built entry points (npm test builds first). */
export const FIXTURE_GLOB = "dist/test/local/fixtures/*.js";
export const APP_DIR = join(__dirname, "..", "..");

export interface Recorded {
  fn: string;
  phase?: string;
  input?: unknown;
  inputType?: string;
  triggerMetadata?: Record<string, unknown> | null;
  [key: string]: unknown;
}

export function recordFile(): string {
  return join(mkdtempSync(join(tmpdir(), "localrt-")), "invocations.jsonl");
}

export function readRecords(file: string): Recorded[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Recorded);
}

export async function waitFor<T>(
  probe: () => T | Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 10_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await probe();
  while (!ok(last)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 50));
    last = await probe();
  }
  return last;
}

export function queueService(): QueueServiceClient {
  return QueueServiceClient.fromConnectionString(testStorageConnectionString());
}

export function fixtureSettings(overrides: Record<string, string> = {}): {
  settings: Record<string, string>;
  file: string;
  queue: string;
} {
  const file = recordFile();
  const queue = uniqueName("lrq");
  return {
    file,
    queue,
    settings: {
      AzureWebJobsStorage: testStorageConnectionString(),
      FIXTURE_QUEUE: queue,
      // Far enough away that the timer never fires during a test that is not about it.
      FIXTURE_SCHEDULE: "0 0 0 1 1 *",
      LOCAL_FIXTURE_RECORD_FILE: file,
      ...overrides,
    },
  };
}
