import { afterEach, describe, expect, it } from "vitest";
import { armEdgeOptions } from "../../src/app/services";
import { CLOUDS, CLOUD_NAMES } from "../../src/core/clouds";
import { ArmCompute } from "../../src/azure/compute";
import { credentialOptions, StaticTokenCredential } from "../../src/azure/credentials";
import { loadConfig } from "../../src/config";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { DEMO, manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/**
 * POOLSYNC_CLOUD picks Resource Manager's endpoint, the audience of its tokens, the authority host and the storage
 * suffix together. Under each name poolsync runs against the simulator (ARM_ENDPOINT pointing at it), asks its
 * credential for that cloud's audience, and applies a declaration.
 */

const base = {
  POOLSYNC_SCOPES: "/subscriptions/00000000-0000-0000-0000-0000000000aa",
  POOLSYNC_BINDINGS: "*",
  AzureWebJobsStorage__accountName: "poolsyncdata",
};

describe("POOLSYNC_CLOUD", () => {
  it.each(CLOUD_NAMES)(
    "%s: Resource Manager, token audience, authority host and storage suffix from the one name",
    (name) => {
      const cloud = CLOUDS[name];
      const c = loadConfig({ ...base, POOLSYNC_CLOUD: name });
      expect(c.cloud).toBe(cloud);
      expect(c.armEndpoint).toBe(cloud.resourceManager);
      expect(c.armCredential).toBe("default");
      expect(credentialOptions(c).authorityHost).toBe(cloud.authorityHost);
      expect(c.storage).toMatchObject({
        tableServiceUri: `https://poolsyncdata.table.${cloud.storageSuffix}`,
        queueServiceUri: `https://poolsyncdata.queue.${cloud.storageSuffix}`,
      });
    },
  );

  it("the three clouds differ in every part, and the public cloud is the default", () => {
    expect(loadConfig(base).cloud.name).toBe("AzureCloud");
    for (const part of ["resourceManager", "resourceManagerAudience", "authorityHost", "storageSuffix"] as const)
      expect(new Set(CLOUD_NAMES.map((n) => CLOUDS[n][part])).size, part).toBe(3);
  });

  it("an unknown cloud fails at start, naming the setting and the names it takes", () => {
    expect(() => loadConfig({ ...base, POOLSYNC_CLOUD: "AzureGermanCloud" })).toThrow(
      /POOLSYNC_CLOUD="AzureGermanCloud" .*"AzureCloud"\|"AzureUSGovernment"\|"AzureChinaCloud"|POOLSYNC_CLOUD="AzureGermanCloud" Invalid option/,
    );
  });
});

describe("under each cloud's name, against the simulator", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it.each(CLOUD_NAMES)("%s: the ARM edge asks for the cloud's audience and a declaration is applied", async (name) => {
    h = await startHarness({ env: { POOLSYNC_CLOUD: name } });
    expect(h.config.armEndpoint).toBe(h.sim.url);

    // The edge as services.ts builds it: the token is asked for the cloud's audience, whatever ARM_ENDPOINT is.
    const options = armEdgeOptions(h.config, manualClock());
    expect(options.credential).toBeInstanceOf(StaticTokenCredential);
    await new ArmCompute(options).getScaleSet(scaleSetRef(DEMO.scaleSetId));
    expect((options.credential as StaticTokenCredential).scopesAsked).toEqual([
      `${CLOUDS[name].resourceManagerAudience}/.default`,
    ]);

    const ref = scaleSetRef(DEMO.scaleSetId);
    await h.services.declarations.upsert(ref, {
      scaleSetId: DEMO.scaleSetId,
      backendPoolId: DEMO.poolId,
      ipConfiguration: "",
      state: "present",
      declaredAt: new Date().toISOString(),
      requestId: `cloud-${name}`,
      declaredBy: QUEUE_DECLARER,
    });
    const report = await h.services.reconcile(ref, { reason: "test", attempt: 0 });
    expect(report.result).toBe("applied");
  });
});
