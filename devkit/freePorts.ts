import { createServer, type Server } from "node:net";

/**
 * `n` distinct TCP ports free on loopback right now (held open together, then released), for what cannot take
 * port 0 itself (Azurite wants its three ports up front). Another process may take one before we do: rare on a
 * laptop, and the start then fails with EADDRINUSE rather than talking to the wrong thing.
 */
export async function freePorts(n: number, host = "127.0.0.1"): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const s = createServer();
      servers.push(s);
      await new Promise<void>((resolve, reject) => {
        s.once("error", reject);
        s.listen(0, host, () => resolve());
      });
    }
    return servers.map((s) => {
      const addr = s.address();
      if (addr === null || typeof addr === "string") throw new Error("no port");
      return addr.port;
    });
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
