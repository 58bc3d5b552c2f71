import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { tableClient } from "../../src/azure/storageClients";

/** A Table endpoint that accepts every connection and never answers: a hung storage front end. */
async function silentEndpoint(): Promise<{ port: number; requests: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let requests = 0;
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.once("data", () => requests++);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    requests: () => requests,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe("tableClient's timeout (POOLSYNC_TABLE_TIMEOUT_SECONDS)", () => {
  it("a storage endpoint that never answers fails the Table call instead of holding it", async () => {
    const endpoint = await silentEndpoint();
    close = endpoint.close;
    const connectionString =
      "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" +
      "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
      `TableEndpoint=http://127.0.0.1:${endpoint.port}/devstoreaccount1;`;
    // 1 s, not less: on a loaded machine a shorter timeout can fire before the request reaches the endpoint.
    const client = tableClient({ kind: "connectionString", connectionString }, "hung", [], 1_000);
    const started = Date.now();
    await expect(client.getEntity("p", "r")).rejects.toThrow();
    // Each try ended at the timeout (the SDK retries a few times with back-off): seconds, not forever.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(endpoint.requests()).toBeGreaterThan(0);
  }, 60_000);
});
