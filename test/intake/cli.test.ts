import { execFile } from "node:child_process";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT, main } from "../../src/cli/main";
import { DEMO } from "../support/harness";
import { APP_DIR, startIntakeApp, waitFor, type IntakeApp } from "./support";

/**
 * `poolsync declare|status|poison` as a person runs it, against a running runtime, asserting its output and exit codes.
 * The runtime's queue trigger reconciles for real. The built CLI (the package's "bin") runs as a separate process where
 * the process is what is proved (its exit codes, its usage, its first declaration); every other call runs the same
 * `main` in this process with the terminal's stdout and stderr captured, which is all the bin adds (its last lines),
 * over the same HTTP API: 23 Node processes cost this file about 6 CPU-seconds of the fast loop's budget.
 */

const CLI = join(APP_DIR, "dist/src/cli/main.js");
const OTHER_SUB = "99999999-2222-3333-4444-555555555555";
let app: IntakeApp;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI's `main` as the bin calls it: console.log's and console.error's lines, the API's URL from the environment. */
async function poolsync(...args: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, {
    out: (t) => out.push(`${t}\n`),
    err: (t) => err.push(`${t}\n`),
    env: { POOLSYNC_URL: app.url, POOLSYNC_KEY: "" },
  });
  return { code, stdout: out.join(""), stderr: err.join("") };
}

/** The built bin as a separate process. */
function poolsyncProcess(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    // Async, never execFileSync: the runtime serving the CLI lives in this very process.
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, POOLSYNC_URL: app.url, POOLSYNC_KEY: "" }, timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

beforeAll(async () => {
  app = await startIntakeApp({ reconcile: true });
});
afterAll(async () => {
  await app?.stop();
});

describe("poolsync declare", () => {
  it("declares over PUT /api/memberships, prints the request id and exits 0; status then shows it applied", async () => {
    const r = await poolsyncProcess(
      "declare",
      "--url",
      app.url,
      "--scale-set",
      DEMO.scaleSetId,
      "--pool",
      DEMO.poolId,
      "--state",
      "present",
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(EXIT.ok);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe("accepted: present etag-k8s/etag-k8s on etag-k8s-mp-0 (primary ip configuration)");
    expect(lines[1]).toMatch(/^request id: [0-9a-f-]{36}$/);
    expect(lines[2]).toBe("declared by: function key holder (function-key, key)");
    expect(lines[3]).toBe(`queued for reconcile; watch it with: poolsync status --scale-set ${DEMO.scaleSetId}`);

    await waitFor(
      async () => (await poolsync("status", "--scale-set", DEMO.scaleSetId)).stdout,
      (out) => out.includes(" applied"),
      "the CLI to show the declaration applied",
    );
    const s = await poolsync("status", "--scale-set", DEMO.scaleSetId);
    expect(s.code).toBe(EXIT.ok);
    expect(s.stdout).toContain(`etag-k8s-mp-0  ${DEMO.scaleSetId}`);
    expect(s.stdout).toContain("  etag-k8s/etag-k8s  primary  declared present  observed present");
    expect(s.stdout).toContain("instances 2/2 present  in-sync  applied");
    expect(s.stdout).toMatch(/instance 0: present {2}ETag "\d+"/);
    expect(s.stdout).toMatch(/declared \S+ by function key holder \(function-key, key\) \(request [0-9a-f-]{36}\)/);
  });

  it("exits 1 with the API's code and reason when it refuses (outside the scopes, a bad ID)", async () => {
    const outside = DEMO.scaleSetId.replace(DEMO.subscription, OTHER_SUB);
    const r = await poolsync("declare", "--scale-set", outside, "--pool", DEMO.poolId, "--state", "present");
    expect(r.code).toBe(EXIT.apiError);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim()).toBe(`poolsync: 403 out_of_scope: scaleSetId: ${outside} is outside POOLSYNC_SCOPES`);

    const bad = await poolsync(
      "declare",
      "--scale-set",
      "/subscriptions/x",
      "--pool",
      DEMO.poolId,
      "--state",
      "absent",
    );
    expect(bad.code).toBe(EXIT.apiError);
    expect(bad.stderr.trim()).toMatch(/^poolsync: 400 invalid_field: scaleSetId: is not a scale set ID/);
  });

  const USAGE_CASES = [
    [["declare", "--scale-set", DEMO.scaleSetId, "--state", "present"], "declare needs --pool ID"],
    [
      ["declare", "--scale-set", DEMO.scaleSetId, "--pool", DEMO.poolId, "--state", "on"],
      'declare needs --state present or --state absent, not "on"',
    ],
    [["frobnicate"], 'unknown command "frobnicate"'],
    [["status", "--pool", DEMO.poolId], "status takes no --pool"],
    [[], "no command given"],
  ] as const;

  it("exits 2 with the usage on a missing flag, an unknown command or flag, and a bad state", async () => {
    for (const [i, [args, message]] of USAGE_CASES.entries()) {
      // The first as the bin's process: its exit code is the usage's.
      const r = await (i === 0 ? poolsyncProcess : poolsync)(...args);
      expect(r.code, args.join(" ")).toBe(EXIT.usage);
      expect(r.stderr).toContain(`poolsync: ${message}\n\nusage: poolsync <command> [options]`);
    }
    const unknownFlag = await poolsync("status", "--bogus");
    expect(unknownFlag.code).toBe(EXIT.usage);
    expect(unknownFlag.stderr).toMatch(/^poolsync: Unknown option '--bogus'/);
  });

  it("exits 3 and says so when nothing listens at --url", async () => {
    // A port that was free a moment ago (fetch refuses "unsafe" ports such as 9 before connecting).
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    await new Promise((r) => server.close(r));
    const r = await poolsyncProcess("status", "--url", `http://127.0.0.1:${port}`);
    expect(r.code).toBe(EXIT.unreachable);
    expect(r.stderr.trim()).toBe(
      `poolsync: cannot reach poolsync at http://127.0.0.1:${port} (ECONNREFUSED); is it running? (npm run local, or --url)`,
    );
  });

  it("--help prints the usage and exits 0", async () => {
    const r = await poolsyncProcess("--help");
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout).toContain("exit codes: 0 done, 1 the API refused or failed, 2 bad usage, 3 cannot reach the app");
  });
});

describe("poolsync status and poison", () => {
  it("status prints the counts; --json the API's answer as is", async () => {
    const r = await poolsync("status");
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout).toMatch(/^declarations {2}1 \(1 applied\)$/m);
    expect(r.stdout).toMatch(
      /^cache rows {4}3 \(1 scale set, 2 instances; \d marked for a re-read, 0 past the 600 s TTL\)$/m,
    );
    const j = await poolsync("status", "--json");
    expect(JSON.parse(j.stdout)).toMatchObject({
      declarations: { total: 1 },
      queue: { name: app.settings.POOLSYNC_QUEUE },
    });
  });

  it("poison lists the poison queue's messages with their reasons", async () => {
    const empty = await poolsync("poison");
    expect(empty.stdout.trim()).toBe(`no poison messages on ${app.settings.POOLSYNC_QUEUE}-poison`);
    const bad = {
      v: 1,
      kind: "reconcile",
      scaleSetId: DEMO.scaleSetId.replace(DEMO.subscription, OTHER_SUB),
      reason: "hand-made",
    };
    await app.queue.sendMessage(Buffer.from(JSON.stringify(bad)).toString("base64"));
    const r = await waitFor(
      () => poolsync("poison"),
      (x) => /^\d+ poison message/.test(x.stdout),
      "the message to be poisoned",
    );
    expect(r.code).toBe(EXIT.ok);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe(`1 poison message on ${app.settings.POOLSYNC_QUEUE}-poison`);
    expect(lines[2]).toMatch(
      new RegExp(
        `^- \\S+Z {2}scaleSetId: ${bad.scaleSetId.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} is outside POOLSYNC_SCOPES$`,
      ),
    );
    expect(lines[3]).toBe(`  scale set: ${bad.scaleSetId}`);
    expect(lines[4]).toBe(`  received: ${JSON.stringify(bad)}`);
  });
});

describe("the Entra token", () => {
  it("is sent as Authorization: Bearer (from --token, else POOLSYNC_TOKEN)", async () => {
    const seen: Array<string | null> = [];
    const fake = (async (_url: URL, init: RequestInit) => {
      seen.push(new Headers(init.headers).get("authorization"));
      return new Response("", { status: 401, statusText: "Unauthorized" });
    }) as unknown as typeof fetch;
    const io = { out: () => undefined, err: () => undefined, env: { POOLSYNC_TOKEN: "env-token" }, fetch: fake };
    await main(["status", "--url", "https://poolsync.example", "--token", "flag-token"], io);
    await main(["status", "--url", "https://poolsync.example"], io);
    expect(seen).toEqual(["Bearer flag-token", "Bearer env-token"]);
  });
});

describe("the function key", () => {
  it("is sent as x-functions-key (from --key, else POOLSYNC_KEY), and a 401 from the host says how to pass one", async () => {
    const seen: Array<string | null> = [];
    const fake = (async (_url: URL, init: RequestInit) => {
      seen.push(new Headers(init.headers).get("x-functions-key"));
      return new Response("", { status: 401, statusText: "Unauthorized" });
    }) as unknown as typeof fetch;
    const err: string[] = [];
    const io = {
      out: () => undefined,
      err: (t: string) => err.push(t),
      env: { POOLSYNC_KEY: "from-env" },
      fetch: fake,
    };
    expect(await main(["status", "--url", "https://poolsync.example", "--key", "from-flag"], io)).toBe(EXIT.apiError);
    expect(await main(["status", "--url", "https://poolsync.example"], io)).toBe(EXIT.apiError);
    expect(seen).toEqual(["from-flag", "from-env"]);
    expect(err[0]).toBe(
      "poolsync: 401 http_401: GET /api/status answered 401 Unauthorized; sign in: pass an Entra token with --token or POOLSYNC_TOKEN (or, with the key fallback, --key)",
    );
  });
});

describe("text from storage, ARM or the queue is printed inert", () => {
  // Retitle the window, clear the screen, colour, an 8-bit CSI, a hyperlink, a right-to-left override, a forged line.
  const HOSTILE =
    "\u001b]0;owned\u0007\u001b[2J\u001b[31mred\u009b0m \u001b]8;;https://evil.example\u001b\\click\u001b]8;;\u001b\\ \u202eesrever\r\nforged: line";
  // What a terminal could obey: C0 but the newline, DEL, C1, bidi overrides and isolates.
  // eslint-disable-next-line no-control-regex
  const OBEYED = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

  it("poison prints a queued message's text without its escape sequences or line breaks; --json keeps it exact", async () => {
    await app.queue.sendMessage(Buffer.from(HOSTILE, "utf8").toString("base64"));
    const r = await waitFor(
      () => poolsync("poison"),
      (x) => x.stdout.includes("forged"),
      "the hostile message to be poisoned",
    );
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout).not.toMatch(OBEYED);
    expect(r.stdout).toContain("  received: red click esrever forged: line\n");
    expect(r.stdout).not.toMatch(/^forged/m);
    const j = await poolsync("poison", "--json");
    expect(j.stdout).not.toMatch(OBEYED);
    expect((JSON.parse(j.stdout) as Array<{ received: string }>).map((m) => m.received)).toContain(HOSTILE);
  });

  it("status prints ARM's reason for a failed declaration without the escape sequences ARM's message held", async () => {
    app.sim!.control.injectFault({
      method: "PUT",
      path: "/virtualMachineScaleSets/etag-k8s-mp-0$",
      status: 400,
      times: 4,
      body: { error: { code: "InvalidParameter", message: HOSTILE } },
    });
    const declared = await poolsync(
      "declare",
      "--scale-set",
      DEMO.scaleSetId,
      "--pool",
      DEMO.poolId,
      "--state",
      "absent",
    );
    expect(declared.code).toBe(EXIT.ok);
    const s = await waitFor(
      () => poolsync("status", "--scale-set", DEMO.scaleSetId),
      (x) => x.stdout.includes("forged"),
      "the declaration to fail with ARM's reason",
    );
    expect(s.stdout).not.toMatch(OBEYED);
    expect(s.stdout).toContain("red click esrever forged: line");
    expect(s.stdout).not.toMatch(/^forged/m);
  });
});

describe("poolsync move and the pool kinds (issue 43)", () => {
  const VM = DEMO.scaleSetId.replace(/virtualMachineScaleSets\/etag-k8s-mp-0$/, "virtualMachines/etag-k8s-vm-0");
  const V6 = `${DEMO.poolId}-v6`;
  it("moves a VM between two pools over PUT /api/memberships/move; status names the kind and the move", async () => {
    const declared = await poolsync("declare", "--target", VM, "--pool", DEMO.poolId, "--state", "present");
    expect(declared.code).toBe(EXIT.ok);
    const r = await poolsync("move", "--target", VM, "--from", DEMO.poolId, "--to", V6);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(EXIT.ok);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe(
      "accepted: move etag-k8s-vm-0 from etag-k8s/etag-k8s to etag-k8s/etag-k8s-v6 (one write per resource)",
    );
    expect(lines[1]).toMatch(/^request ids: to [0-9a-f-]{36}, from [0-9a-f-]{36}$/);
    const s = await poolsync("status", "--target", VM);
    expect(s.stdout).toContain(`    backend pool; moving to ${V6}`);
  });

  it("declare --admin-state sends the field; the API's 400 for Drain comes back as exit 1 naming it", async () => {
    const r = await poolsync(
      "declare",
      "--scale-set",
      DEMO.scaleSetId,
      "--pool",
      DEMO.poolId,
      "--state",
      "present",
      "--admin-state",
      "Drain",
      "--instances",
      "0,1",
    );
    expect(r.code).toBe(EXIT.apiError);
    expect(r.stderr).toContain('poolsync: 400 invalid_field: adminState: "Drain" is not an admin state');
    const misplaced = await poolsync("status", "--admin-state", "Down");
    expect(misplaced.code).toBe(EXIT.usage);
    expect(misplaced.stderr).toContain("status takes no --admin-state");
  });
});
