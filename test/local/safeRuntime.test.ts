import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyAppServiceAuthentication } from "../../local/host/clientPrincipal";
import { startLocalRuntime, type LocalRuntime } from "../../local/host/runtime";
import { APP_DIR, FIXTURE_GLOB, fixtureSettings, queueService } from "./support";

/**
 * The local runtime is safe to run (issue 26): loopback only unless told, Host checked (DNS rebinding), a key on the
 * Event Grid webhook, the Functions host's body limit, the test principal only in test mode, and no start against a
 * non-loopback ARM without real authentication. Real HTTP against a runtime serving the fixture app.
 */
const fixture = fixtureSettings();
let rt: LocalRuntime;
const KEY = "safe-runtime-webhook-key";

const start = (over: Parameters<typeof startLocalRuntime>[0] = {}) =>
  startLocalRuntime({
    appDir: APP_DIR,
    entryGlob: FIXTURE_GLOB,
    settings: fixture.settings,
    port: 0,
    timerStatus: "memory",
    log: () => undefined,
    print: false,
    ...over,
  });

/** A raw request, so that Host and Content-Length are exactly what the test says. */
function raw(path: string, headers: Record<string, string>, method = "POST"): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: rt.port, path, method, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

beforeAll(async () => {
  await queueService().getQueueClient(fixture.queue).create();
  rt = await start({ webhookKey: KEY });
});
afterAll(async () => {
  await rt?.stop();
});

describe("the local runtime's own safety", () => {
  const hook = "/runtime/webhooks/eventgrid?functionName=fixtureEvents";

  it("the Event Grid webhook needs its key; the URL the runtime lists carries it", async () => {
    expect(await raw(hook, { host: `127.0.0.1:${rt.port}`, "aeg-event-type": "Unsubscribe" })).toBe(401);
    expect(await raw(`${hook}&code=wrong`, { host: `127.0.0.1:${rt.port}`, "aeg-event-type": "Unsubscribe" })).toBe(
      401,
    );
    expect(await raw(`${hook}&code=${KEY}`, { host: `127.0.0.1:${rt.port}`, "aeg-event-type": "Unsubscribe" })).toBe(
      202,
    );
    expect(rt.functions.find((f) => f.name === "fixtureEvents")?.url).toContain(`&code=${KEY}`);
  });

  it("a Host that is not this machine's (DNS rebinding) gets 421, before anything runs", async () => {
    expect(await raw(`${hook}&code=${KEY}`, { host: "attacker.example:7071", "aeg-event-type": "Unsubscribe" })).toBe(
      421,
    );
    expect(await raw("/", { host: "attacker.example" }, "GET")).toBe(421);
    expect(await raw("/", { host: `localhost:${rt.port}` }, "GET")).toBe(200);
  });

  it("a body over the Functions host's 100 MiB is refused with 413", async () => {
    expect(
      await raw(`${hook}&code=${KEY}`, {
        host: `127.0.0.1:${rt.port}`,
        "aeg-event-type": "Notification",
        "content-length": String(104_857_601),
      }),
    ).toBe(413);
  });

  it("x-test-client-principal is honoured only in test mode", () => {
    const headers = { "x-test-client-principal": JSON.stringify({ id: "u1", name: "u", roles: ["poolsync.Declare"] }) };
    const off = applyAppServiceAuthentication(headers);
    expect("headers" in off && off.headers["x-ms-client-principal"]).toBeFalsy();
    expect("headers" in off && off.headers["x-test-client-principal"]).toBeFalsy();
    const on = applyAppServiceAuthentication(headers, true);
    expect("headers" in on && on.headers["x-ms-client-principal-id"]).toBe("u1");
  });

  it("refuses to listen beyond loopback unless told, and to start against a non-loopback ARM without real authentication", async () => {
    await expect(start({ host: "0.0.0.0" })).rejects.toThrow(/loopback only.*--allow-remote/);
    await expect(
      start({ settings: { ...fixture.settings, ARM_ENDPOINT: "https://management.azure.com" } }),
    ).rejects.toThrow(/not on this machine: the local runtime refuses to start without real authentication/);
  });
});
