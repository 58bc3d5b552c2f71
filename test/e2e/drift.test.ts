import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { chromium } from "playwright-core";
import { request } from "node:https";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePorts } from "../../devkit/freePorts";
import { modelNics, nicPoolsByIpConfig, poolsByIpConfig } from "../../sim/wire";
import type { JsonObject } from "../../sim";
import { APP_DIR, IDS, simClient, startLocalProcess, waitFor, type LocalProcess } from "./support";

/**
 * Drift attribution through `npm run local`: another writer (its bearer token names it: the simulator's events carry
 * the token's claims, as ARM's do) PUTs a stale copy without our pool: on the Uniform model, and on a standalone VM's
 * NIC. GET /api/memberships must then say, within a minute, who did it, how it was found, and that it was repaired.
 */

const RG = IDS.scaleSet.replace(/\/providers\/.*$/, "/providers");
const VM = `${RG}/Microsoft.Compute/virtualMachines/etag-k8s-vm-0`;
const VM_NIC = `${RG}/Microsoft.Network/networkInterfaces/etag-k8s-vm-0-nic`;
const pool = IDS.pool.toLowerCase();
const SIM_CA = readFileSync(join(APP_DIR, "sim", "tls", "cert.pem"), "utf8");
const OBJECT_ID = "http://schemas.microsoft.com/identity/claims/objectidentifier";

/** An unsigned JWT-shaped token: the simulator takes its payload as the caller's claims. */
const tokenOf = (claims: Record<string, string>) =>
  `${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.x`;

type Drift = {
  at: string;
  by: { name: string; id: string; appId: string };
  operation: string;
  correlationId: string;
  source: string;
  repairedAt: string | null;
  resourceId: string;
};

describe("npm run local: another writer's stale PUT is a drift attributed to that writer, and repaired", () => {
  let local: LocalProcess;
  let sim: ReturnType<typeof simClient>;
  let simUrl: string;
  let api: string;

  beforeAll(async () => {
    const [runtime, simPort, blob, queue, table] = (await freePorts(5)) as [number, number, number, number, number];
    local = await startLocalProcess(
      [
        "--port",
        String(runtime),
        "--sim-port",
        String(simPort),
        "--blob-port",
        String(blob),
        "--queue-port",
        String(queue),
        "--table-port",
        String(table),
        "--event-delay-ms",
        "100",
      ],
      {
        POOLSYNC_EVENT_DEBOUNCE_SECONDS: "1",
        POOLSYNC_OPERATION_POLL_SECONDS: "0.05",
        POOLSYNC_RECONCILE_SCHEDULE: "*/5 * * * * *",
      },
    );
    simUrl = `https://127.0.0.1:${simPort}`;
    sim = simClient(simUrl);
    api = `http://127.0.0.1:${runtime}/api/memberships`;
  });

  afterAll(async () => {
    await local?.interrupt();
  });

  /** An ARM call as another tool makes it, with its own token. */
  const arm = (method: string, id: string, apiVersion: string, token: string, body?: unknown) =>
    new Promise<{ status: number; body: JsonObject }>((resolve, reject) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        new URL(`${id}?api-version=${apiVersion}`, simUrl),
        {
          method,
          ca: SIM_CA,
          headers: { authorization: `Bearer ${token}`, ...(text ? { "content-type": "application/json" } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const raw = Buffer.concat(chunks).toString("utf8");
            resolve({ status: res.statusCode ?? 0, body: raw ? (JSON.parse(raw) as JsonObject) : {} });
          });
        },
      );
      req.on("error", reject);
      req.end(text);
    });

  const declare = async (targetId: string) => {
    const res = await fetch(api, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ targetId, backendPoolId: IDS.pool, state: "present" }),
    });
    expect(res.status, await res.clone().text()).toBe(202);
  };
  const membership = async (targetId: string) =>
    (
      (await (await fetch(`${api}?targetId=${encodeURIComponent(targetId)}`)).json()) as {
        memberships: { outcome: { kind: string }; drift: Drift | null }[];
      }
    ).memberships[0];

  it("a stale whole-model PUT by the cluster autoscaler: drift on the model, by its name, found by event, repaired", async () => {
    await declare(IDS.scaleSet);
    await waitFor(
      "the scale set applied",
      () => membership(IDS.scaleSet),
      (m) => m?.outcome.kind === "applied",
      60_000,
    );
    expect((await membership(IDS.scaleSet))?.drift).toBeNull();

    // The autoscaler's copy of the model predates our pool: it PUTs it whole, without If-Match.
    const token = tokenOf({
      name: "cluster-autoscaler",
      [OBJECT_ID]: "0000aaaa-0000-0000-0000-00000000a570",
      appid: "0000bbbb-0000-0000-0000-00000000a570",
    });
    const read = await arm("GET", IDS.scaleSet, "2024-07-01", token);
    const nics = modelNics(read.body);
    for (const n of nics)
      for (const c of (n.properties as { ipConfigurations: { properties: JsonObject }[] }).ipConfigurations)
        c.properties.loadBalancerBackendAddressPools = [];
    const stale = {
      location: read.body.location,
      sku: read.body.sku,
      properties: { ...(read.body.properties as JsonObject) },
    };
    (
      (stale.properties.virtualMachineProfile as JsonObject).networkProfile as JsonObject
    ).networkInterfaceConfigurations = nics as unknown as JsonObject[];
    const put = await arm("PUT", IDS.scaleSet, "2024-07-01", token, stale);
    expect(put.status, JSON.stringify(put.body)).toBeLessThan(300);
    const startedAt = Date.now();

    const m = await waitFor(
      "the drift, attributed and repaired",
      () => membership(IDS.scaleSet),
      (x) => !!x?.drift?.repairedAt,
      60_000,
    );
    expect(Date.now() - startedAt).toBeLessThan(60_000);
    expect(m?.drift).toMatchObject({
      by: {
        name: "cluster-autoscaler",
        id: "0000aaaa-0000-0000-0000-00000000a570",
        appId: "0000bbbb-0000-0000-0000-00000000a570",
      },
      operation: "Microsoft.Compute/virtualMachineScaleSets/write",
      source: "event",
      resourceId: IDS.scaleSet,
    });
    expect(m?.drift?.correlationId).not.toBe("");
    expect(Date.parse(m?.drift?.repairedAt ?? "")).toBeGreaterThanOrEqual(Date.parse(m?.drift?.at ?? ""));
    expect(poolsByIpConfig(modelNics(await sim.resource(IDS.scaleSet)))).toEqual({ ipConfig0: [pool] });
    // The log line carries it too.
    const line = local.logs().find((l) => l.event === "drift" && l.targetId === IDS.scaleSet);
    expect(line).toMatchObject({ by: { name: "cluster-autoscaler" }, source: "event" });
  });

  it("a stale NIC PUT on a standalone VM by a person: drift on that NIC, by their name, repaired", async () => {
    await declare(VM);
    await waitFor(
      "the VM applied",
      () => membership(VM),
      (m) => m?.outcome.kind === "applied",
      60_000,
    );
    const token = tokenOf({
      name: "Dana Ops",
      [OBJECT_ID]: "0000cccc-0000-0000-0000-0000000d0a00",
      appid: "0000dddd-0000-0000-0000-0000000d0a00",
    });
    const read = await arm("GET", VM_NIC, "2024-05-01", token);
    for (const c of (read.body.properties as { ipConfigurations: { properties: JsonObject }[] }).ipConfigurations)
      c.properties.loadBalancerBackendAddressPools = [];
    const put = await arm("PUT", VM_NIC, "2024-05-01", token, {
      location: read.body.location,
      properties: read.body.properties,
    });
    expect(put.status, JSON.stringify(put.body)).toBeLessThan(300);

    const m = await waitFor(
      "the NIC's drift, attributed and repaired",
      () => membership(VM),
      (x) => !!x?.drift?.repairedAt,
      60_000,
    );
    expect(m?.drift).toMatchObject({
      by: { name: "Dana Ops", id: "0000cccc-0000-0000-0000-0000000d0a00" },
      source: "event",
      resourceId: VM_NIC,
    });
    expect(nicPoolsByIpConfig(await sim.resource(VM_NIC))).toEqual({ ipConfig0: [pool] });
  });

  it("the scale set's history: the declaration, our writes, the drift by its writer, the repair, in order; paged", async () => {
    type Entry = {
      at: string;
      kind: string;
      resourceId?: string;
      by?: { name?: string; id?: string };
      added?: string[];
      etagBefore?: string;
      etagAfter?: string;
      outcome?: string;
    };
    const history = async (query = "") =>
      (await (
        await fetch(`${api.replace(/memberships$/, "history")}?targetId=${encodeURIComponent(IDS.scaleSet)}${query}`)
      ).json()) as {
        entries: Entry[];
        next?: string;
      };
    const all = await waitFor(
      "the history to hold the repair",
      () => history(),
      (h) => h.entries.filter((e) => e.kind === "write").length >= 4,
      20_000,
    );
    const timeline = [...all.entries].reverse();
    const kinds = timeline.map((e) =>
      e.kind === "write" ? `write ${e.resourceId?.includes("/virtualMachines/") ? "instance" : "model"}` : e.kind,
    );
    expect(kinds.slice(0, 5)).toEqual(["declaration", "write model", "write instance", "write instance", "drift"]);
    expect(kinds.slice(5)).toContain("write model");
    expect(timeline[0]?.by).toMatchObject({ via: "key" });
    expect(timeline[4]?.by).toMatchObject({ name: "cluster-autoscaler" });
    const repair = timeline.slice(5).find((e) => e.kind === "write" && !e.resourceId?.includes("/virtualMachines/"));
    expect(repair).toMatchObject({ added: [IDS.pool], outcome: "ok" });
    expect(repair?.etagBefore).not.toBe(repair?.etagAfter);
    for (let i = 1; i < timeline.length; i++)
      expect(Date.parse(timeline[i]!.at)).toBeGreaterThanOrEqual(Date.parse(timeline[i - 1]!.at));

    const first = await history("&limit=2");
    expect(first.entries).toEqual(all.entries.slice(0, 2));
    const second = await history(`&limit=2&cursor=${first.next}`);
    expect(second.entries).toEqual(all.entries.slice(2, 4));
  });

  it.skipIf(!existsSync("/usr/bin/chromium") && !process.env.CI)(
    "the status page shows the drift by its writer beside the membership, and the history (test-results/status-drift.png, 1,400 px wide)",
    async () => {
      const profile = mkdtempSync(join(tmpdir(), "poolsync-chromium-"));
      const context = await chromium.launchPersistentContext(profile, {
        executablePath: "/usr/bin/chromium",
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
        viewport: { width: 1400, height: 900 },
      });
      try {
        const page = context.pages()[0] ?? (await context.newPage());
        await page.goto(api.replace(/memberships$/, "status"));
        const section = page.getByRole("region", { name: "scale set etag-k8s-mp-0" });
        const drift = (await section.locator("tbody tr td .drift").first().innerText()).replace(/\s+/g, " ");
        expect(drift).toMatch(
          /^drift by cluster-autoscaler model etag-k8s-mp-0 · \S+ · Microsoft.Compute\/virtualMachineScaleSets\/write · seen by its event/,
        );
        expect(drift).toMatch(/repaired \S+$/);
        const history = await section.locator("ul.history li").allInnerTexts();
        expect(history.some((l) => /drift on etag-k8s-mp-0 by cluster-autoscaler/.test(l))).toBe(true);
        expect(history.some((l) => /wrote model etag-k8s-mp-0/.test(l))).toBe(true);
        mkdirSync(join(APP_DIR, "test-results"), { recursive: true });
        await page.screenshot({ path: join(APP_DIR, "test-results", "status-drift.png"), fullPage: true });
      } finally {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      }
    },
  );

  it("our own writes are never drift", () => {
    const drifts = local.logs().filter((l) => l.event === "drift");
    expect(drifts.map((l) => (l.by as { name: string }).name).sort()).toEqual(["Dana Ops", "cluster-autoscaler"]);
  });
});
