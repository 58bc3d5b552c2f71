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

  it("as Event Grid delivers (seeded): every event at least once, some twice, out of order, some late on its retry schedule", async () => {
    const hook = await webhook([]);
    servers.push(hook.server);
    // 10,000 simulated seconds per real second: Event Grid's first attempts (1 to 20 s) take 0.1 to 2 real ms, a retry
    // after 10 s one more, its hours under a second.
    const timeScale = 10_000;
    const run = async (seed: number) => {
      hook.received.length = 0;
      const f = new EventForwarder({ delayMs: 0, eventGrid: { seed, timeScale } });
      f.setTargets([hook.url]);
      for (let i = 0; i < 200; i++) f.publish({ id: `e${i}` });
      expect(await f.idle(20_000)).toBe(true);
      return hook.received.map((r) => (r.body as Array<{ id: string }>)[0]!.id);
    };
    const got = await run(7);
    const ids = Array.from({ length: 200 }, (_, i) => `e${i}`);
    expect([...new Set(got)].sort()).toEqual([...ids].sort());
    expect(got.length).toBeGreaterThan(200);
    // Out of order: some event arrives before one published earlier.
    expect(got.some((id, k) => k > 0 && Number(id.slice(1)) < Number(got[k - 1]!.slice(1)))).toBe(true);
    // The same seed plans the same deliveries (which events come twice).
    const twice = (list: string[]) => list.filter((id, k) => list.indexOf(id) !== k).sort();
    expect(twice(await run(7))).toEqual(twice(got));
  });

  it("as Event Grid delivers: a webhook's refusal is retried on Event Grid's schedule, not given up after a few tries", async () => {
    const hook = await webhook([500, 500, 500, 500, 500]);
    servers.push(hook.server);
    const errors: string[] = [];
    const f = new EventForwarder({
      delayMs: 0,
      eventGrid: { seed: 1, timeScale: 1_000, failRate: 0, duplicateRate: 0, firstAttemptMs: { min: 0, max: 0 } },
      onError: (m) => errors.push(m),
    });
    f.setTargets([hook.url]);
    f.publish({ id: "late" });
    expect(await f.idle(10_000)).toBe(true);
    // Five refusals, then the sixth try at 10 + 30 + 60 + 300 + 600 simulated seconds got through.
    expect(hook.received).toHaveLength(6);
    expect(f.stats).toMatchObject({ delivered: 1, failed: 0 });
    expect(errors.map((e) => /retrying in ([\d.]+) ms$/.exec(e)?.[1])).toEqual(["10", "30", "60", "300", "600"]);
  });
});
