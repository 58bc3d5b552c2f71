import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = join(__dirname, "..", "..");

/** The ARM SDK packages a fresh process has loaded after requiring these built function files. */
async function armSdksLoadedBy(files: string[]): Promise<string[]> {
  const script = `
    for (const f of ${JSON.stringify(files)}) require(f);
    const sdks = new Set(Object.keys(require.cache).map((k) => /node_modules\\/@azure\\/(arm-[^/]+)\\//.exec(k)?.[1]).filter(Boolean));
    console.log(JSON.stringify([...sdks].sort()));`;
  const { stdout } = await run(process.execPath, ["-e", script], { cwd: root, env: { PATH: process.env.PATH ?? "" } });
  return JSON.parse(stdout.trim().split("\n").pop()!) as string[];
}

const fn = (name: string) => join(root, "dist", "src", "functions", `${name}.js`);

describe("the ARM SDKs load only where ARM is called", () => {
  it("the HTTP and Event Grid functions load neither @azure/arm-compute nor @azure/arm-network", async () => {
    expect(await armSdksLoadedBy([fn("status"), fn("memberships"), fn("onResourceEvent")])).toEqual([]);
  });

  it("the first Compute and Network client made loads them (the check above can fail)", async () => {
    const script = `
      const { ArmCompute } = require(${JSON.stringify(join(root, "dist/src/azure/compute.js"))});
      const { ArmNetwork } = require(${JSON.stringify(join(root, "dist/src/azure/network.js"))});
      const opts = { endpoint: "https://127.0.0.1:1", credential: { getToken: async () => null }, scope: "x/.default",
        clock: { now: Date.now, sleep: async () => {} }, requestTimeoutMs: 1, operationMaxWaitMs: 1, operationPollIntervalMs: 1 };
      new ArmCompute(opts).client("s"); new ArmNetwork(opts).client("s");
      console.log(JSON.stringify([...new Set(Object.keys(require.cache).map((k) => /node_modules\\/@azure\\/(arm-[^/]+)\\//.exec(k)?.[1]).filter(Boolean))].sort()));`;
    const { stdout } = await run(process.execPath, ["-e", script], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "" },
    });
    expect(JSON.parse(stdout.trim().split("\n").pop()!)).toEqual(["arm-compute", "arm-network"]);
  });
});
