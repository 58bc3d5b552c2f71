import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { functionTimeoutFrom, loadHostConfig } from "../../local/host/hostConfig";
import { formatTimeSpan } from "../../local/host/invoke";
import type { InvocationLog } from "../../local/host/invoke";
import { encodeMessageBody } from "../../local/host/queueMessage";
import { startLocalRuntime, type LocalRuntime } from "../../local/host/runtime";
import { APP_DIR, FIXTURE_GLOB, fixtureSettings, queueService, readRecords, waitFor } from "./support";

/**
 * host.json's `functionTimeout` across the runtime's real edges: a queue message through Azurite, an HTTP request
 * over a socket. The timeout is lowered to one second by the app setting the host reads over host.json.
 */
const fixture = fixtureSettings({ AzureFunctionsJobHost__functionTimeout: "00:00:01" });
let rt: LocalRuntime;
const logs: InvocationLog[] = [];

beforeAll(async () => {
  await queueService().getQueueClient(fixture.queue).create();
  rt = await startLocalRuntime({
    appDir: APP_DIR,
    entryGlob: FIXTURE_GLOB,
    settings: fixture.settings,
    port: 0,
    timerStatus: "memory",
    queues: { maxPollingIntervalMs: 200, visibilityTimeoutMs: 1000, maxDequeueCount: 2 },
    log: (e) => logs.push(e),
    print: false,
  });
});

afterAll(async () => {
  // Resolves although hung invocations never finish: nothing waits for an invocation past its timeout.
  await rt?.stop();
});

const timeoutLines = (fn: string) =>
  logs.filter((l) => l.functionName === fn && l.message.startsWith("Timeout value of 00:00:01 exceeded"));

describe("functionTimeout", () => {
  it("reads host.json's TimeSpan, the app setting over it, null or -1 as none, and refuses anything else by name", () => {
    expect(loadHostConfig(APP_DIR).functionTimeoutMs).toBe(10 * 60_000); // this repository's host.json
    expect(loadHostConfig(APP_DIR, { AzureFunctionsJobHost__functionTimeout: "00:00:02.5" }).functionTimeoutMs).toBe(
      2500,
    );
    expect(functionTimeoutFrom(undefined, undefined)).toBe(30 * 60_000);
    expect(functionTimeoutFrom(null, undefined)).toBeUndefined();
    expect(functionTimeoutFrom("00:05:00", "-1")).toBeUndefined();
    expect(() => functionTimeoutFrom(600, undefined)).toThrow(/host.json functionTimeout: must be a TimeSpan/);
    expect(() => functionTimeoutFrom("00:05:00", "10 minutes")).toThrow(
      /AzureFunctionsJobHost__functionTimeout: "10 minutes" is not a TimeSpan/,
    );
    expect(() => functionTimeoutFrom("00:00:00.5", undefined)).toThrow(/at least 00:00:01/);
    expect([formatTimeSpan(600_000), formatTimeSpan(1500)]).toEqual(["00:10:00", "00:00:01.500"]);
  });

  it("fails a queue invocation that outlives it: the message is not completed, comes back, and is poisoned at maxDequeueCount", async () => {
    const queue = queueService().getQueueClient(fixture.queue);
    const body = JSON.stringify({ marker: "hung-1", hang: true });
    await queue.sendMessage(encodeMessageBody(body, "base64"));
    const attempts = () =>
      readRecords(fixture.file).filter((r) => r.fn === "fixtureQueue" && JSON.stringify(r.input).includes("hung-1"));
    const seen = await waitFor(attempts, (r) => r.length >= 2, 20_000, "the hung message to come back");
    expect(seen.map((r) => r.triggerMetadata?.dequeueCount)).toEqual([1, 2]);
    // It came back after the timeout (1 s) and the visibility timeout (1 s), not the 10-minute lease.
    const gapMs = Date.parse(String(seen[1]?.at)) - Date.parse(String(seen[0]?.at));
    expect(gapMs).toBeGreaterThanOrEqual(1900);
    expect(gapMs).toBeLessThan(15_000);
    const poison = queueService().getQueueClient(`${fixture.queue}-poison`);
    const poisoned = await waitFor(
      // The host creates the poison queue on its first message: until then, none.
      async () => ((await poison.exists()) ? (await poison.peekMessages()).peekedMessageItems : []),
      (m) => m.length === 1,
      10_000,
      "the twice-timed-out message in the poison queue",
    );
    expect(Buffer.from(poisoned[0]?.messageText ?? "", "base64").toString()).toBe(body);
    expect(timeoutLines("fixtureQueue")).toHaveLength(2);
    expect(timeoutLines("fixtureQueue")[0]).toMatchObject({ level: "error", category: "system" });
    expect(
      logs.some((l) =>
        /Executed 'fixtureQueue' \(Failed, dequeueCount=1\): Timeout value of 00:00:01 was exceeded/.test(l.message),
      ),
    ).toBe(true);
  });

  it("answers an HTTP caller 500 when the handler outlives it, and a quick handler as usual", async () => {
    const started = Date.now();
    const hung = await fetch(`${rt.url}/api/items/hang`, { signal: AbortSignal.timeout(10_000) });
    expect(hung.status).toBe(500);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(timeoutLines("fixtureItem")).toHaveLength(1);
    const quick = await fetch(`${rt.url}/api/items/7`);
    expect(quick.status).toBe(200);
  });
});
