import { afterEach, describe, expect, it } from "vitest";
import { EXIT, main } from "../../src/cli/main";
import { recordingServer, type Answer, type RecordingServer } from "../support/recordingServer";

let server: RecordingServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Runs the CLI in this process against a real HTTP server that answers every request with `answer`. */
async function poolsync(answer: Answer, args: string[], env: Record<string, string> = {}) {
  server = await recordingServer(() => answer);
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    env: { POOLSYNC_URL: server.url, ...env },
  });
  return { code, out: out.join("\n"), err: err.join("\n"), received: server.received };
}

const VM =
  "/subscriptions/0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/web 1";
const POOL =
  "/subscriptions/0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/be";
const NOTHING_TO_WRITE = { targetId: VM, declarations: 0, writes: [], basedOn: { source: "none", oldestAgeMs: 0 } };

describe("the poolsync CLI", () => {
  it("plans a target by its ID in the query, with the key from POOLSYNC_KEY, and prints the plan", async () => {
    const r = await poolsync({ status: 200, body: NOTHING_TO_WRITE }, ["plan", VM], { POOLSYNC_KEY: "k-env" });
    expect(r.code).toBe(EXIT.ok);
    expect(r.received.map((q) => [q.method, q.url, q.headers["x-functions-key"]])).toEqual([
      ["GET", `/api/plan?targetId=${encodeURIComponent(VM)}`, "k-env"],
    ]);
    expect(r.out).toBe(`plan for ${VM}: nothing to write (0 declarations; based on nothing read, oldest 0 s old)`);
  });

  it("declares a VM's membership as targetId, with the admin state and its instances trimmed", async () => {
    const r = await poolsync({ status: 202, body: { requestId: "r-1" } }, [
      "declare",
      "--target",
      VM,
      "--pool",
      POOL,
      "--state",
      "present",
      "--admin-state",
      "Down",
      "--instances",
      "3, 7",
      "--json",
    ]);
    expect(r.code).toBe(EXIT.ok);
    expect(JSON.parse(r.received[0]?.body ?? "")).toEqual({
      targetId: VM,
      backendPoolId: POOL,
      state: "present",
      adminState: "Down",
      instances: ["3", "7"],
    });
    expect(JSON.parse(r.out)).toEqual({ requestId: "r-1" });
  });

  it.each([
    [["move", "--target", VM, "--from", POOL], "move needs --from POOL and --to POOL"],
    [["status", "--pool", POOL], "status takes no --pool"],
    [
      ["declare", "--target", VM, "--pool", POOL, "--state", "gone"],
      'declare needs --state present or --state absent, not "gone"',
    ],
    [["plan", VM, "extra"], 'unexpected argument "extra"'],
    [["status", "--url", "not a url"], '--url "not a url" is not a URL'],
  ])("refuses %j with exit 2, the reason and the usage, asking the API nothing", async (args, reason) => {
    const r = await poolsync({ status: 200, body: {} }, args);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toMatch(new RegExp(`^poolsync: ${reason.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\n\nusage: poolsync`));
    expect(r.received).toEqual([]);
  });

  it("exits 1 with the API's status, code and reason, its escape sequences removed", async () => {
    const r = await poolsync(
      { status: 403, body: { error: { code: "out_of_scope", message: "outside \u001b[31mPOOLSYNC_SCOPES\u001b[0m" } } },
      ["status", "--target", VM],
    );
    expect(r.code).toBe(EXIT.apiError);
    expect(r.err).toBe("poolsync: 403 out_of_scope: outside POOLSYNC_SCOPES");
    expect(r.received[0]?.url).toBe(`/api/memberships?targetId=${encodeURIComponent(VM)}`);
  });

  it("poison --json prints only the poison messages, as the API gave them", async () => {
    const poison = [{ id: "m-1", reason: "bad \u2028 text" }];
    const r = await poolsync({ status: 200, body: { queue: { poisonName: "q-poison", poison: 1 }, poison } }, [
      "poison",
      "--json",
    ]);
    expect(r.received[0]?.url).toBe("/api/status?poison=1");
    expect(r.out).toContain("\\u2028");
    expect(JSON.parse(r.out)).toEqual(poison);
  });
});
