import { createPipelineRequest, createHttpHeaders, type PipelineResponse } from "@azure/core-rest-pipeline";
import { describe, expect, it } from "vitest";
import {
  COMPUTE_API_VERSION,
  FIRST_COMPUTE_API_VERSION_WITH_ETAGS,
  pinComputeApiVersion,
} from "../../src/azure/apiVersion";

const SUB = "00000000-aaaa-4bbb-8ccc-000000000451";

/** The URL the policy hands on to the next one in the pipeline. */
async function sentUrl(url: string, version?: string): Promise<string> {
  const policy = pinComputeApiVersion(version);
  let sent = "";
  await policy.sendRequest(createPipelineRequest({ url }), async (req): Promise<PipelineResponse> => {
    sent = req.url;
    return { request: req, status: 200, headers: createHttpHeaders() };
  });
  return sent;
}

describe("pinComputeApiVersion", () => {
  it("speaks a Compute api-version that carries ETags", () => {
    expect(COMPUTE_API_VERSION >= FIRST_COMPUTE_API_VERSION_WITH_ETAGS).toBe(true);
  });

  it("replaces whatever api-version a Compute request carries with the pinned one", async () => {
    const url = `https://arm.example/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/a?api-version=2021-03-01`;
    expect(new URL(await sentUrl(url)).searchParams.get("api-version")).toBe(COMPUTE_API_VERSION);
  });

  it("adds the version to a Compute operation poll or nextLink that has none", async () => {
    const url = `https://arm.example/subscriptions/${SUB}/providers/microsoft.compute/locations/westeurope/operations/op-1`;
    expect(new URL(await sentUrl(url, "2024-07-01")).searchParams.get("api-version")).toBe("2024-07-01");
  });

  it("leaves Network and other providers' requests as they were", async () => {
    const url = `https://arm.example/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb?api-version=2024-05-01`;
    expect(await sentUrl(url)).toBe(url);
  });
});
