import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { EventForwarder } from "../../local/stack/eventForwarder";

interface Received {
  headers: IncomingMessage["headers"];
  body: unknown;
}

async function webhook(statuses: number[]): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString()));
    req.on("end", () => {
      received.push({ headers: req.headers, body: JSON.parse(text) as unknown });
      res.statusCode = statuses.shift() ?? 202;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/runtime/webhooks/eventgrid?functionName=f`,
    received,
    server,
  };
}

describe("EventForwarder", () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });

  it("holds events until it has targets, then POSTs each as a one-event Event Grid Notification after the delay", async () => {
    const hook = await webhook([]);
    servers.push(hook.server);
    const f = new EventForwarder({ delayMs: 50 });
    f.publish({ id: "e1" });
    const start = Date.now();
    f.setTargets([hook.url]);
    expect(await f.idle(5000)).toBe(true);
    expect(Date.now() - start).toBeGreaterThanOrEqual(45);
    expect(hook.received).toEqual([
      {
        headers: expect.objectContaining({ "aeg-event-type": "Notification", "content-type": "application/json" }),
        body: [{ id: "e1" }],
      },
    ]);
    expect(f.stats).toEqual({ published: 1, delivered: 1, failed: 0, pending: 0 });
  });

  it("retries a delivery answered 500, then gives up and reports it", async () => {
    const hook = await webhook([500, 500]);
    servers.push(hook.server);
    const errors: string[] = [];
    const f = new EventForwarder({ delayMs: 0, retryDelaysMs: [10], onError: (m) => errors.push(m) });
    f.setTargets([hook.url]);
    f.publish({ id: "e2" });
    expect(await f.idle(5000)).toBe(true);
    expect(hook.received).toHaveLength(2);
    expect(f.stats).toMatchObject({ delivered: 0, failed: 1 });
    expect(errors).toEqual([
      expect.stringMatching(/^Event e2: .* answered 500; retrying in 10 ms$/),
      expect.stringMatching(/^Event e2: .* answered 500; giving up after 2 deliveries$/),
    ]);
  });

  it("stop() drops what is not yet sent and says how many", async () => {
    const hook = await webhook([]);
    servers.push(hook.server);
    const f = new EventForwarder({ delayMs: 10_000 });
    f.setTargets([hook.url]);
    f.publish({ id: "a" });
    f.publish({ id: "b" });
    expect(await f.stop()).toBe(2);
    f.publish({ id: "c" });
    expect(f.stats).toMatchObject({ published: 2, pending: 0 });
    expect(hook.received).toEqual([]);
  });

  it("several hosts: each event reaches one host, in turn, and a delivery a dead host refuses is retried on another", async () => {
    const hooks = [await webhook([]), await webhook([]), await webhook([])];
    servers.push(...hooks.map((h) => h.server));
    // The third host is down: its port refuses connections.
    const dead = hooks[2]!;
    await new Promise((r) => dead.server.close(r));
    servers.pop();
    const errors: string[] = [];
    const f = new EventForwarder({ delayMs: 0, retryDelaysMs: [10, 10], onError: (m) => errors.push(m) });
    f.setHostTargets(hooks.map((h) => [h.url]));
    for (let i = 0; i < 6; i++) f.publish({ id: `e${i}` });
    expect(await f.idle(5000)).toBe(true);
    const got = hooks.slice(0, 2).map((h) => h.received.map((r) => (r.body as Array<{ id: string }>)[0]!.id));
    // Every event delivered exactly once, over both live hosts.
    expect([...got[0]!, ...got[1]!].sort()).toEqual(["e0", "e1", "e2", "e3", "e4", "e5"]);
    expect(got[0]!.length).toBeGreaterThan(0);
    expect(got[1]!.length).toBeGreaterThan(0);
    expect(f.stats).toMatchObject({ published: 6, delivered: 6, failed: 0 });
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => /retrying in 10 ms$/.test(e))).toBe(true);
  });
});
