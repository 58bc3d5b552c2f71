import { describe, expect, it } from "vitest";
import { listenerLockBlob, SingletonListener, type Startable } from "../../local/host/listenerLock";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";

/** A listener that records whether it runs; each lock holder makes a fresh one, as the runtime does. */
function recorder(host: string, log: string[]): () => Startable {
  return () => ({
    start: async () => void log.push(`${host} start`),
    stop: async () => void log.push(`${host} stop`),
  });
}

const waitUntil = async (what: string, ok: () => boolean, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe("SingletonListener: a timer runs on the host holding its blob lease under azure-webjobs-hosts", () => {
  it("runs the listener on one host of three; the lease is a blob under locks/{hostId}/{function}.Listener", async () => {
    const cs = testStorageConnectionString();
    const hostId = uniqueName("app");
    const log: string[] = [];
    const hosts = ["a", "b", "c"].map(
      (h) =>
        new SingletonListener(listenerLockBlob(cs, hostId, "reconcileStale"), recorder(h, log), {
          leaseSeconds: 15,
          recoveryPollMs: 100,
        }),
    );
    await Promise.all(hosts.map((h) => h.start()));
    await new Promise((r) => setTimeout(r, 400));
    expect(hosts.filter((h) => h.holding)).toHaveLength(1);
    expect(log.filter((l) => l.endsWith("start"))).toHaveLength(1);
    const { blob } = listenerLockBlob(cs, hostId, "reconcileStale");
    expect(blob.url).toContain(`/azure-webjobs-hosts/locks/${hostId}/reconcileStale.Listener`);
    expect((await blob.getProperties()).leaseState).toBe("leased");
    await Promise.all(hosts.map((h) => h.stop()));
  });

  it("another host takes the timer over when the holder stops, and only one runs it at any time", async () => {
    const cs = testStorageConnectionString();
    const hostId = uniqueName("app");
    const log: string[] = [];
    const a = new SingletonListener(listenerLockBlob(cs, hostId, "t"), recorder("a", log), {
      leaseSeconds: 15,
      recoveryPollMs: 100,
    });
    const b = new SingletonListener(listenerLockBlob(cs, hostId, "t"), recorder("b", log), {
      leaseSeconds: 15,
      recoveryPollMs: 100,
    });
    await a.start();
    await b.start();
    expect([a.holding, b.holding]).toEqual([true, false]);
    await a.stop();
    await waitUntil("b to take the lock", () => b.holding);
    expect(log).toEqual(["a start", "a stop", "b start"]);
    await b.stop();
  });

  it("a host that died holding the lease (never released) is replaced once the lease runs out", async () => {
    const cs = testStorageConnectionString();
    const hostId = uniqueName("app");
    const { container, blob } = listenerLockBlob(cs, hostId, "t");
    await container.createIfNotExists();
    await blob.upload("", 0);
    await blob.getBlobLeaseClient().acquireLease(15); // the dead host's lease
    const log: string[] = [];
    const b = new SingletonListener({ container, blob }, recorder("b", log), { leaseSeconds: 15, recoveryPollMs: 500 });
    await b.start();
    expect(b.holding).toBe(false);
    await waitUntil("the dead host's lease to expire and b to take over", () => b.holding, 25_000);
    expect(log).toEqual(["b start"]);
    await b.stop();
  }, 30_000);

  it("refuses a lease period Blob storage does not allow", () => {
    expect(
      () =>
        new SingletonListener(listenerLockBlob(testStorageConnectionString(), "x", "t"), recorder("a", []), {
          leaseSeconds: 5,
        }),
    ).toThrow(/leaseSeconds must be 15-60/);
  });
});
