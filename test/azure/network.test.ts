import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config";
import { systemClock } from "../../src/app/systemClock";
import { armNetworkFromConfig } from "../../src/app/services";
import { parseNicId, type NicRef } from "../../src/core/resourceIds";
import { DEMO_SUBSCRIPTION, startArmSimulator, type ArmSimulator } from "../../sim";
import { SIM_CA_FILE } from "../support/harness";

/**
 * The Network edge through the real arm-network SDK against the simulator. NRP answers a NIC PUT synchronously
 * (recorded: 201/200, Succeeded, no Azure-AsyncOperation) and with no ETag header: the etag is only in the body.
 */

const NIC_ID = `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/etag/providers/Microsoft.Network/networkInterfaces/etag-k8s-vm-0-nic`;
const POOL_ID = `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/etag/providers/Microsoft.Network/loadBalancers/etag-k8s/backendAddressPools/etag-k8s`;

function nicRef(): NicRef {
  const r = parseNicId(NIC_ID);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
}

describe.each([
  ["synchronous, as recorded (the etag in the body only)", false],
  ["asynchronous (an operation and the ETag header)", true],
])("ArmNetwork.writeNic, NIC PUT answered %s", (_name, nicWriteAsync) => {
  let sim: ArmSimulator;
  beforeAll(async () => {
    sim = await startArmSimulator({ tls: true, seed: "demo", operationDurationMs: 20, nicWriteAsync });
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it("returns the ETag NRP gave the NIC, so the next If-Match write passes", async () => {
    const config = loadConfig({
      POOLSYNC_SCOPES: `/subscriptions/${DEMO_SUBSCRIPTION}`,
      POOLSYNC_BINDINGS: "*",
      ARM_ENDPOINT: sim.url,
      POOLSYNC_ARM_CA_FILE: SIM_CA_FILE,
      AzureWebJobsStorage: "UseDevelopmentStorage=true",
      POOLSYNC_OPERATION_POLL_SECONDS: "0.05",
    });
    const network = armNetworkFromConfig(config, systemClock);
    const ref = nicRef();
    const read = await network.getNic(ref);
    const ipcs = (read.nic.ipConfigurations ?? []).map((c, i) =>
      i === 0 ? { ...c, loadBalancerBackendAddressPools: [{ id: POOL_ID }] } : c,
    );
    const written = await network.writeNic(ref, read, ipcs, {
      ifMatch: read.etag,
      clientRequestId: "00000000-0000-0000-0000-0000000000a1",
    });
    const stored = sim.control.resource(NIC_ID)?.["etag"];
    expect(written.etag).toBe(stored);
    expect(written.etag).not.toBe(read.etag);
    // The ETag it returned is what the next conditional write is sent with: it must pass.
    const again = await network.writeNic(ref, written, read.nic.ipConfigurations, {
      ifMatch: written.etag,
      clientRequestId: "00000000-0000-0000-0000-0000000000a2",
    });
    expect(again.etag).toBe(sim.control.resource(NIC_ID)?.["etag"]);
  });
});
