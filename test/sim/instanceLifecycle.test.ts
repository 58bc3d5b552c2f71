// Instances that go and come back, as CRP answers them (test/fixtures/azure/gone/README.md): a write to an instance on
// its way out or gone is a 400 "not an active ... instanceId", its GET a 404; a scale-out reuses the lowest free ID
// with a new vmId and ETag "1", which stays "1" once its create ended; CRP moves a new top-level VM's ETag once after
// its create, with no event.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startArmSimulator, type ArmSimulator, type ArmSimulatorOptions } from "../../sim/index";
import { arm, VMSS_PATH } from "./testkit";

const FIXTURES = path.resolve(__dirname, "../fixtures/azure/gone");
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const fixture = (name: string): any => JSON.parse(readFileSync(path.join(FIXTURES, name), "utf8"));

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});
// Operations long enough that a delete still runs while the test writes (simulated time moves with real time).
async function start(opts: ArmSimulatorOptions = {}): Promise<ArmSimulator> {
  sim = await startArmSimulator({ seed: "demo", operationDurationMs: 60_000, ...opts });
  return sim;
}
const INSTANCE_1 = `${VMSS_PATH}/virtualMachines/1`;
const put = (s: ArmSimulator, id: string, headers: Record<string, string> = {}) =>
  arm(s.url, "PUT", id, { body: { location: "eastus2", tags: { a: "1" } }, headers });

/** The keys of an object, recursively (arrays by their first item): a body's shape without its values. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? [shape(v[0])] : [];
  if (v && typeof v === "object")
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, shape((v as Record<string, unknown>)[k])]),
    );
  return typeof v;
}

describe("a write to an instance that is being deleted or gone", () => {
  it("answers CRP's 400 InvalidParameter (target instanceIds) while its delete runs and once it is gone; its GET is 404", async () => {
    const s = await start();
    const { etag } = (await arm(s.url, "GET", INSTANCE_1)).body as { etag: string };
    s.control.scale(VMSS_PATH, 1); // a routine scale-in: the highest ID goes
    const during = await put(s, INSTANCE_1, { "if-match": etag });
    // The transcribed answer names instance 3; ours is instance 1.
    const recorded = JSON.parse(
      JSON.stringify(fixture("crp-vmss-vm-put-400-not-active.body.json")).replace("instanceId 3 ", "instanceId 1 "),
    ) as unknown;
    expect(during.status).toBe(400);
    expect(during.body).toEqual(recorded);
    expect(shape(during.body)).toEqual(shape(fixture("crp-vmss-vm-get-400-non-numeric-instanceId.body.json")));
    s.control.settle();
    const after = await put(s, INSTANCE_1);
    expect(after.status).toBe(400);
    expect(after.body).toEqual(recorded);
    const get = await arm(s.url, "GET", INSTANCE_1);
    expect(get.status).toBe(404);
    expect(get.body.error.code).toBe("ResourceNotFound");
  });

  it("answers 409 OperationNotAllowed 'marked for deletion' while the delete runs when set so", async () => {
    const s = await start({ deletingInstanceWrite: "markedForDeletion409" });
    s.control.delete(s.control.ids.instance(VMSS_PATH, 1));
    const during = await put(s, INSTANCE_1);
    expect(during.status).toBe(409);
    expect(during.body.error).toMatchObject({
      code: "OperationNotAllowed",
      message: expect.stringContaining("since it is marked for deletion"),
    });
    s.control.settle();
    expect((await put(s, INSTANCE_1)).status).toBe(400);
  });
});

describe("instance IDs reused, ETags that move without a write", () => {
  it('a scale-out after a scale-in reuses the lowest free ID: a new vmId, ETag "1" at create and still "1" once it ended', async () => {
    const s = await start();
    const dead = (await arm(s.url, "GET", INSTANCE_1)).body;
    expect(dead.etag).toBe('"1"');
    s.control.scale(VMSS_PATH, 1);
    s.control.settle();
    s.control.scale(VMSS_PATH, 2);
    const creating = await arm(s.url, "GET", INSTANCE_1);
    expect(creating.status).toBe(200);
    expect(creating.headers.get("etag")).toBe('"1"'); // the same ETag as the dead instance's: If-Match cannot tell them apart
    expect(creating.body.properties.provisioningState).toBe("Creating");
    expect(creating.body.properties.vmId).toMatch(/^[0-9a-f-]{36}$/);
    expect(creating.body.properties.vmId).not.toBe(dead.properties.vmId);
    const events = s.control.events().length;
    s.control.settle();
    const created = await arm(s.url, "GET", INSTANCE_1);
    expect(created.headers.get("etag")).toBe('"1"');
    expect(created.body.properties).toMatchObject({
      provisioningState: "Succeeded",
      vmId: creating.body.properties.vmId,
    });
    // The scale-out's own event only.
    expect(
      s.control
        .events()
        .slice(events)
        .map((e) => e.data.operationName),
    ).toEqual(["Microsoft.Compute/virtualMachineScaleSets/write"]);
    // LIST items carry vmId as the recorded LIST does.
    const list = await arm(s.url, "GET", `${VMSS_PATH}/virtualMachines`);
    const recordedItem = fixture("crp-vmss-vm-list-200.body.json").value[0];
    for (const item of list.body.value) {
      expect(typeof item.properties.vmId).toBe(typeof recordedItem.properties.vmId);
      expect(Object.keys(item)).toEqual(expect.arrayContaining(["etag", "instanceId", "id", "name", "properties"]));
    }
    expect(list.body.value.find((i: { instanceId: string }) => i.instanceId === "1").properties.vmId).toBe(
      creating.body.properties.vmId,
    );
  });

  it('follows the recordings: a VM moves from "1" to "2" once its create ended, a Uniform instance stays at "1"', async () => {
    // cloud-provider-azure's VM cassette: the create answers "1", the GET after its operation "2".
    const created = fixture("crp-vm-create-201-etag1.body.json");
    const later = fixture("crp-vm-get-after-create-etag2.body.json");
    expect([created.etag, later.etag]).toEqual(['"1"', '"2"']);
    // Its VMSS VM cassette: the LIST after the scale set's create ended (polled Succeeded) answers instance 0 at "1".
    const listed = fixture("crp-vmss-vm-list-200.body.json").value[0];
    expect([listed.properties.provisioningState, listed.etag]).toEqual(["Succeeded", '"1"']);
    const s = await start();
    s.control.scale(VMSS_PATH, 3);
    expect((await arm(s.url, "GET", `${VMSS_PATH}/virtualMachines/2`)).body.etag).toBe('"1"');
    const FLEX = VMSS_PATH.replace("etag-k8s-mp-0", "etag-k8s-flex-0");
    s.control.scale(FLEX, 3);
    const vmId = s.control.virtualMachines(FLEX)[2]?.["id"] as string;
    expect((await arm(s.url, "GET", vmId)).body.etag).toBe(created.etag);
    s.control.settle();
    expect((await arm(s.url, "GET", `${VMSS_PATH}/virtualMachines/2`)).body.etag).toBe(listed.etag);
    expect((await arm(s.url, "GET", vmId)).body.etag).toBe(later.etag);
  });

  it("leaves the ETag alone after a create when etagBumpAfterCreate is off, and IDs only grow with reuseInstanceIds off", async () => {
    const s = await start({ etagBumpAfterCreate: false, reuseInstanceIds: false });
    s.control.scale(VMSS_PATH, 1);
    s.control.settle();
    s.control.scale(VMSS_PATH, 2);
    s.control.settle();
    const vms = s.control.instances(VMSS_PATH);
    expect(vms.map((i) => [i["instanceId"], i["etag"]])).toEqual([
      ["0", '"1"'],
      ["2", '"1"'],
    ]);
  });
});
