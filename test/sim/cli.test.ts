// The command line (`npm run sim`) and the /_sim/ control endpoints another process uses.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseArgs } from "../../sim/cli";
import { arm, POOL_ID, VMSS_PATH } from "./testkit";

const ROOT = path.join(__dirname, "..", "..");
let child: ChildProcess | undefined;
afterEach(() => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  child = undefined;
});

/**
 * Starts the CLI and resolves with its first stdout line. One process, tsx as its loader: tsx's own CLI would run the
 * simulator in a child of its own and relay a SIGTERM to it, giving the child 30 ms to say it got it before it kills
 * it and exits 143, a race a loaded machine lost once (the simulator's own stop is what this file checks).
 */
function startCli(args: string[]): Promise<string> {
  child = spawn(process.execPath, ["--import", "tsx", "sim/cli.ts", ...args], { cwd: ROOT });
  return new Promise((resolve, reject) => {
    let out = "";
    child?.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) resolve(out.split("\n")[0] ?? "");
    });
    child?.once("exit", (code) => reject(new Error(`cli exited ${String(code)}: ${out}`)));
  });
}

const control = async (base: string, method: string, p: string, body?: unknown) => {
  const r = await fetch(`${base}${p}`, { method, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};

describe("cli", () => {
  it("parses its flags", () => {
    expect(parseArgs(["--port", "18443", "--seed", "demo", "--throttling", "--time-scale", "60"])).toEqual({
      port: 18443,
      seed: "demo",
      throttling: true,
      timeScale: 60,
    });
    expect(parseArgs(["--latency-ms=5", "--random-seed", "7", "-h"])).toEqual({ help: true });
    expect(parseArgs(["--jitter-ms", "3"])).toEqual({ port: 18443, latency: { fixedMs: 0, jitterMs: 3 } });
  });

  it("refuses unknown and malformed flags with the usage", () => {
    const usage = /\nusage: npm run sim --/;
    expect(() => parseArgs(["--bogus"])).toThrow(/^Unknown option '--bogus'/);
    expect(() => parseArgs(["--bogus"])).toThrow(usage);
    expect(() => parseArgs(["--port"])).toThrow(/^Option '--port <value>' argument missing/);
    expect(() => parseArgs(["--port", "--tls"])).toThrow(/^Option '--port' argument is ambiguous/);
    expect(() => parseArgs(["--port", "x"])).toThrow(/^--port needs a number, got "x"/);
    expect(() => parseArgs(["--time-scale="])).toThrow(/^--time-scale needs a number, got ""/);
    expect(() => parseArgs(["--tls=yes"])).toThrow(/^Option '--tls' does not take an argument/);
    expect(() => parseArgs(["18443"])).toThrow(/^Unexpected argument '18443'/);
  });

  it("prints exactly where it listens, serves the demo, answers /_sim/, and stops on SIGTERM", async () => {
    const line = await startCli(["--port", "0", "--seed", "demo"]);
    expect(line).toMatch(/^ARM simulator listening on http:\/\/127\.0\.0\.1:\d+$/);
    const base = line.replace("ARM simulator listening on ", "");
    const got = await arm(base, "GET", VMSS_PATH);
    expect(got.body.sku.capacity).toBe(2);

    expect((await control(base, "GET", "/_sim/health")).body).toEqual({ ok: true });
    await control(base, "POST", "/_sim/write", { id: VMSS_PATH, merge: { tags: { by: "other" } } });
    // Its operation ends first: the interleaved writer (and our PATCH) would meet it with 409.
    await control(base, "POST", "/_sim/settle");
    expect((await control(base, "GET", `/_sim/resource?id=${encodeURIComponent(VMSS_PATH)}`)).body["etag"]).toBe('"2"');
    await control(base, "POST", "/_sim/interleave", { id: VMSS_PATH, merge: { tags: { by: "interleaved" } } });
    expect(
      (await arm(base, "PATCH", VMSS_PATH, { headers: { "if-match": '"2"' }, body: { tags: { me: "1" } } })).status,
    ).toBe(412);
    await control(base, "POST", "/_sim/faults", { method: "GET", path: "etag-k8s-mp-0$", status: 500 });
    expect((await arm(base, "GET", VMSS_PATH)).status).toBe(500);
    expect((await control(base, "GET", `/_sim/stats?id=${encodeURIComponent(VMSS_PATH)}`)).body).toMatchObject({
      gets: 2,
      patches: 1,
      status412: 1,
    });
    await control(base, "POST", "/_sim/scale", { id: VMSS_PATH, capacity: 3 });
    await control(base, "POST", "/_sim/settle");
    expect(
      ((await control(base, "GET", `/_sim/instances?id=${encodeURIComponent(VMSS_PATH)}`)).body["value"] as unknown[])
        .length,
    ).toBe(3);
    expect((await control(base, "GET", `/_sim/pool-members?id=${encodeURIComponent(POOL_ID)}`)).body["value"]).toEqual(
      [],
    );
    const events = (await control(base, "GET", "/_sim/events?since=0")).body;
    expect((events["value"] as unknown[]).length).toBeGreaterThanOrEqual(2);
    const clock = (await control(base, "POST", "/_sim/clock/advance", { ms: 60_000 })).body;
    expect(clock["now"]).toBeTypeOf("number");
    expect((await control(base, "POST", "/_sim/reset", { seed: "demo" })).status).toBe(200);
    expect((await control(base, "GET", "/_sim/stats")).body["requests"]).toBe(0);

    const exited = new Promise<number | null>((resolve) => child?.once("exit", (code) => resolve(code)));
    child?.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
