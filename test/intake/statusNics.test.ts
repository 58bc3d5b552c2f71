import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TargetCache } from "../../src/azure/targets/targetCache";
import { parseNicId } from "../../src/core/resourceIds";
import type { ScaleSetView } from "../../src/intake/observedState";
import { DEMO_SEED, type JsonObject, type SeedSpec } from "../../sim";
import { addNicPool } from "../../sim/wire";
import { DEMO } from "../support/harness";
import { APP_DIR, json, startIntakeApp, targetsOf, waitFor, type IntakeApp } from "./support";

/**
 * The NICs of a standalone VM and of a Flexible scale set's VMs, seen through GET /api/memberships and the status
 * page: each VM's NICs with the pools on each ip configuration (ours and another team's), whether each VM holds each
 * membership, a drift on a NIC (another writer dropped our pool; the reconcile repaired it), a stale mark, and the
 * history. The page is read in headless Chromium at 1,400 px: long resource IDs must not squeeze the pool column.
 */

const RG = DEMO.scaleSetId.replace(/\/providers\/.*$/, "/providers");
const VM = `${RG}/Microsoft.Compute/virtualMachines/etag-k8s-vm-0`;
const VM_NIC = `${RG}/Microsoft.Network/networkInterfaces/etag-k8s-vm-0-nic`;
const FLEX = `${RG}/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-flex-0`;
const OTHER_POOL = DEMO.poolId.replace(/backendAddressPools\/etag-k8s$/, "backendAddressPools/other-team");
const CHROMIUM = "/usr/bin/chromium";
const SCREENSHOT = join(APP_DIR, "test-results", "status-nics.png");

function withOtherTeamPool(): SeedSpec {
  const seed = structuredClone(DEMO_SEED);
  for (const lb of seed.subscriptions[0]!.resourceGroups[0]!.loadBalancers ?? []) lb.backendPools.push("other-team");
  return seed;
}

type View = ScaleSetView & { memberships: (ScaleSetView["memberships"][number] & { drift: JsonObject | null })[] };

let app: IntakeApp;
let cache: TargetCache;
const view = async (targetId: string): Promise<View> =>
  (await (await fetch(`${app.url}/api/memberships?targetId=${encodeURIComponent(targetId)}`)).json()) as View;
const flexNics = (): string[] =>
  app
    .sim!.control.virtualMachines(FLEX)
    .map(
      (vm) =>
        (
          (vm["properties"] as { networkProfile: { networkInterfaces: { id: string }[] } }).networkProfile
            .networkInterfaces[0] as { id: string }
        ).id,
    );
const markStale = async (nicId: string, reason: string) => {
  const ref = parseNicId(nicId);
  if (!ref.ok) throw new Error(ref.reason);
  await cache.markStale(ref.value, reason);
};

beforeAll(async () => {
  app = await startIntakeApp({ reconcile: true, seed: withOtherTeamPool() });
  cache = targetsOf(app).cache;
  // Another team's pool on the VM's NIC, there before poolsync looks.
  app.sim!.control.write(VM_NIC, addNicPool("ipConfig0", OTHER_POOL));
  for (const targetId of [VM, FLEX])
    expect(
      (await fetch(`${app.url}/api/memberships`, json({ targetId, backendPoolId: DEMO.poolId, state: "present" })))
        .status,
    ).toBe(202);
  for (const targetId of [VM, FLEX])
    await waitFor(
      () => view(targetId),
      (v) => v.memberships[0]?.outcome.kind === "applied",
      `${targetId} to be applied`,
    );
}, 120_000);

afterAll(async () => {
  await app?.stop();
});

describe("GET /api/memberships of a VM and of a Flexible scale set: their NICs, from the cache", () => {
  it("a standalone VM: its NIC with the pools on each ip configuration (ours declared, the other team's not), and the VM holding the membership", async () => {
    const v = await view(VM);
    expect(v.vms).toHaveLength(1);
    const vm = v.vms![0]!;
    expect(vm.vmId.toLowerCase()).toBe(VM.toLowerCase());
    expect(vm.etag).toEqual(expect.any(String));
    expect(vm.nics).toHaveLength(1);
    expect(vm.nics[0]).toMatchObject({
      name: "etag-k8s-vm-0-nic",
      primary: true,
      etag: String(app.sim!.control.resource(VM_NIC)?.etag),
      stale: false,
    });
    expect(vm.nics[0]!.nicId.toLowerCase()).toBe(VM_NIC.toLowerCase());
    const pools = vm.nics[0]!.ipConfigurations.map((c) => [
      c.name,
      c.backendPools.map((p) => [p.id.split("/").pop(), p.declared]),
    ]);
    expect(pools).toEqual([
      [
        "ipConfig0",
        expect.arrayContaining([
          ["etag-k8s", true],
          ["other-team", false],
        ]),
      ],
    ]);
    const m = v.memberships[0]!;
    expect(m.vms).toEqual([expect.objectContaining({ vmId: vm.vmId, state: "present", stale: false })]);
    // A VM has no model: the membership is judged on its NIC, not left "unknown".
    expect(m.model.note).toBe("a VM has no model: its membership is on its NICs");
    expect(m.sync).toBe("in-sync");
  });

  it("a Flexible scale set: every VM's NIC with our pool, each VM holding the membership", async () => {
    const v = await view(FLEX);
    const nics = flexNics().map((id) => id.toLowerCase());
    expect(v.vms).toHaveLength(nics.length);
    expect(v.vms!.flatMap((vm) => vm.nics.map((n) => n.nicId.toLowerCase())).sort()).toEqual([...nics].sort());
    for (const vm of v.vms!) {
      // Named after the model's NIC configuration it was built from, as the reconcile maps it.
      expect(vm.nics[0]).toMatchObject({ name: "etag-k8s-flex-0-nic-0", primary: true });
      const v4 = vm.nics[0]!.ipConfigurations.find((c) => c.name === "ipConfig0");
      expect(v4?.backendPools).toEqual([
        { id: expect.stringMatching(/backendAddressPools\/etag-k8s$/i), declared: true },
      ]);
    }
    const m = v.memberships[0]!;
    expect(m.vms?.map((x) => x.state)).toEqual(nics.map(() => "present"));
    expect(m.sync).toBe("in-sync");
  });

  it("another writer drops our pool from the VM's NIC: after the reconcile the drift names that NIC and is repaired; a stale NIC is marked", async () => {
    app.sim!.control.write(VM_NIC, (nic: JsonObject) => {
      for (const c of (nic.properties as { ipConfigurations: { properties: JsonObject }[] }).ipConfigurations)
        c.properties.loadBalancerBackendAddressPools = (
          (c.properties.loadBalancerBackendAddressPools ?? []) as { id: string }[]
        ).filter((p) => !/backendAddressPools\/etag-k8s$/i.test(p.id));
    });
    // What the NIC's ARM event does: the row goes stale, a reconcile of the VM is asked for.
    await markStale(VM_NIC, "an event: Microsoft.Network/networkInterfaces/write by someone else");
    await app.queue.sendMessage(
      Buffer.from(JSON.stringify({ v: 1, kind: "reconcile", targetId: VM, reason: "test: the NIC changed" })).toString(
        "base64",
      ),
    );
    const v = await waitFor(
      () => view(VM),
      (x) => typeof x.memberships[0]?.drift?.repairedAt === "string",
      "the drift on the VM's NIC, repaired",
    );
    expect((v.memberships[0]!.drift!.resourceId as string).toLowerCase()).toBe(VM_NIC.toLowerCase());
    expect(v.vms![0]!.nics[0]!.ipConfigurations[0]!.backendPools.map((p) => p.declared).sort()).toEqual([false, true]);

    await markStale(flexNics()[0]!, "an event: someone wrote this NIC");
    const flex = await view(FLEX);
    const stale = flex.vms!.flatMap((vm) => vm.nics).find((n) => n.stale);
    expect(stale).toMatchObject({ staleReason: "an event: someone wrote this NIC" });
    expect(flex.memberships[0]!.vms!.filter((x) => x.stale)).toHaveLength(1);
  });
});

describe("poolsync status --target: the same NIC view in a terminal", () => {
  const cli = (...args: string[]) =>
    new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [join(APP_DIR, "dist/src/cli/main.js"), ...args],
        { env: { ...process.env, POOLSYNC_URL: app.url, POOLSYNC_KEY: "" }, timeout: 30_000 },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
      ),
    );

  it("prints the VM's NIC, its full ID, the pools on its ip configuration and the drift on it", async () => {
    const out = await cli("status", "--target", VM);
    const lines = out.split("\n").map((l) => l.trim());
    expect(lines).toContain("VM etag-k8s-vm-0: present");
    expect(lines.find((l) => l.startsWith("NIC etag-k8s-vm-0-nic"))).toMatch(
      /^NIC etag-k8s-vm-0-nic \(primary; drift by unknown, repaired \S+\) {2}ETag \S+$/,
    );
    expect(lines.map((l) => l.toLowerCase())).toContain(VM_NIC.toLowerCase());
    expect(lines).toContain("ipConfig0: other-team (not declared here), etag-k8s");
  });
});

describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)("the status page at 1,400 px in headless Chromium", () => {
  let context: BrowserContext;
  let page: Page;
  let profile: string;

  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), "poolsync-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
      viewport: { width: 1400, height: 900 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    expect((await page.goto(`${app.url}/api/status`))?.status()).toBe(200);
  });

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  const text = (s: string) => s.replace(/\s+/g, " ").trim();

  it("shows the VM's NIC with both pools on its ip configuration, the drift on that NIC and the history", async () => {
    const section = page.getByRole("region", { name: "VM etag-k8s-vm-0" });
    await expect(section.locator(".sub").innerText()).resolves.toMatch(/^.*\nVM ETag \S+ read .* · 1 NIC/);
    const rows = section.locator("table.nics tbody tr");
    await expect(rows.count()).resolves.toBe(1);
    const cells = (await rows.first().locator("td").allInnerTexts()).map(text);
    expect(cells[0]).toBe("…/etag-k8s-vm-0");
    expect(cells[1]).toBe("etag-k8s-vm-0-nic primary …/etag-k8s-vm-0-nic");
    expect(cells[2]).toBe("ipConfig0");
    expect(cells[3]).toContain("etag-k8s / etag-k8s");
    expect(cells[3]).toContain("etag-k8s / other-team (not declared here)");
    expect(cells[4]).toMatch(/drift by unknown · repaired/);
    // The membership row: the VM holds it, and the drift is beside it.
    const membership = (await section.locator("table.memberships tbody tr").first().locator("td").allInnerTexts()).map(
      text,
    );
    expect(membership[3]).toBe("no model a VM has no model: its membership is on its NICs");
    expect(membership[4]).toBe("1/1 VMs present etag-k8s-vm-0 present");
    expect(membership[5]).toMatch(/^in sync drift by unknown nic etag-k8s-vm-0-nic/);
    const history = await section.locator("ul.history li").allInnerTexts();
    expect(history.some((l) => /drift on etag-k8s-vm-0-nic by unknown/.test(l))).toBe(true);
    expect(history.some((l) => /wrote nic etag-k8s-vm-0-nic/.test(l))).toBe(true);
  });

  it("shows each Flexible VM's NIC with our pool, and the stale one marked", async () => {
    const section = page.getByRole("region", { name: "scale set etag-k8s-flex-0" });
    const rows = section.locator("table.nics tbody tr");
    // Two VMs, one NIC each, two ip configurations each (IPv4 and IPv6).
    await expect(rows.count()).resolves.toBe(4);
    const all = (await rows.allInnerTexts()).map(text);
    expect(all.filter((r) => r.includes("ipConfig0 etag-k8s / etag-k8s"))).toHaveLength(2);
    expect(all.filter((r) => / stale/.test(r))).toHaveLength(2);
    const membership = (await section.locator("table.memberships tbody tr").first().locator("td").allInnerTexts()).map(
      text,
    );
    expect(membership[4]).toMatch(/^2\/2 VMs present /);
  });

  it("keeps the pool column readable: long IDs do not squeeze it into a ribbon (test-results/status-nics.png)", async () => {
    const tables = await page.locator("section[aria-label] table:first-of-type").all();
    // The VM's and the Flexible scale set's memberships.
    expect(tables.length).toBeGreaterThanOrEqual(2);
    for (const table of tables.slice(0, 2)) {
      const cell = table.locator("tbody tr td").first();
      const box = await cell.boundingBox();
      expect(box?.width).toBeGreaterThan(200);
      // The pool's name and its short ID on one line each, not broken into a ribbon of characters.
      for (const part of [cell.locator("strong"), cell.locator(".rid")]) {
        const b = await part.boundingBox();
        expect(b?.height).toBeLessThan(22);
        expect(b?.width).toBeGreaterThan(60);
      }
      // The full ID is there to copy.
      await expect(cell.locator("input.copy").inputValue()).resolves.toBe(DEMO.poolId);
    }
    const overflow = (await page.evaluate(
      "document.documentElement.scrollWidth - document.documentElement.clientWidth",
    )) as number;
    expect(overflow).toBeLessThanOrEqual(0);
    mkdirSync(join(APP_DIR, "test-results"), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(existsSync(SCREENSHOT)).toBe(true);
  });
});
