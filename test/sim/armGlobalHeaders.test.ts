// ARM's subscription-wide counts as the recorded answers carry them (test/fixtures/azure/gone/INDEX.json): every answer
// has `x-ms-ratelimit-remaining-subscription-global-reads/-writes/-deletes` beside the principal's own count; on a
// subscription nobody else uses, the first request of a kind leaves 15 × 250 - 1 reads (3749) or 15 × 200 - 1 writes
// or deletes (2999), the values recorded.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startArmSimulator, type ArmSimulator } from "../../sim/index";
import { arm, VMSS_PATH } from "./testkit";

interface Recorded {
  file: string;
  method: string;
  url: string;
  status: number;
  responseHeaders: Record<string, string[]>;
}
const INDEX = JSON.parse(
  readFileSync(path.resolve(__dirname, "../fixtures/azure/gone/INDEX.json"), "utf8"),
) as Recorded[];

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

/** The simulator's request for a recorded one: the same method on the same kind of resource of the demo world. */
function requestFor(r: Recorded): { method: string; path: string; body?: unknown } {
  const u = new URL(r.url).pathname;
  if (/\/virtualMachines\/0notfound$/i.test(u))
    return { method: "GET", path: `${VMSS_PATH}/virtualMachines/0notfound` };
  if (/\/virtualMachineScaleSets\/[^/]+\/virtualMachines$/i.test(u))
    return { method: "GET", path: `${VMSS_PATH}/virtualMachines` };
  if (/\/virtualMachineScaleSets\/[^/]+$/i.test(u))
    return r.method === "PUT"
      ? { method: "PATCH", path: VMSS_PATH, body: { tags: {} } }
      : { method: r.method, path: VMSS_PATH };
  if (/\/virtualMachines\/[^/]+$/i.test(u))
    return r.method === "PUT"
      ? { method: "PUT", path: `${VMSS_PATH}/virtualMachines/0`, body: { location: "eastus2" } }
      : { method: "GET", path: `${VMSS_PATH}/virtualMachines/0` };
  throw new Error(`no mapping for ${r.method} ${u}`);
}

describe("ARM's global rate-limit headers, as recorded", () => {
  for (const r of INDEX) {
    const [name, values] =
      Object.entries(r.responseHeaders).find(([k]) => /^x-ms-ratelimit-remaining-subscription-global-/i.test(k)) ?? [];
    if (!name || !values) continue;
    it(`${r.file}: ${r.method} answers ${r.status} with ${name}`, async () => {
      sim = await startArmSimulator({ seed: "demo", operationDurationMs: 0 });
      const req = requestFor(r);
      const got = await arm(sim.url, req.method, req.path, req.body !== undefined ? { body: req.body } : {});
      expect(got.status).toBe(r.status === 201 ? 200 : r.status); // a create recorded; ours updates an existing instance
      // Fresh buckets: 15 × 250 reads or 15 × 200 writes/deletes, less this request. The recording shows that value, or
      // one less where its cassette had spent a read of the same kind just before.
      const fresh = /reads$/i.test(name) ? 3749 : 2999;
      expect(fresh - Number(values[0])).toBeGreaterThanOrEqual(0);
      expect(fresh - Number(values[0])).toBeLessThanOrEqual(1);
      expect(Number(got.headers.get(name.toLowerCase()))).toBe(fresh);
    });
  }
});
