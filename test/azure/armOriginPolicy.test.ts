import { createHttpHeaders, createPipelineRequest } from "@azure/core-rest-pipeline";
import { describe, expect, it } from "vitest";
import { armOriginPolicy, continuationFor } from "../../src/azure/armOriginPolicy";
import { FatalError } from "../../src/core/errors";

const ARM = "https://management.azure.com";
const LIST =
  "/subscriptions/00000000-aaaa-4bbb-8ccc-000000000470/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets";

/** Whether the policy let a request to `url` through to the next policy (the network). */
async function passes(url: string): Promise<boolean> {
  let sent = false;
  await armOriginPolicy(`${ARM}/`).sendRequest(createPipelineRequest({ url }), (request) => {
    sent = true;
    return Promise.resolve({ request, status: 200, headers: createHttpHeaders() });
  });
  return sent;
}

describe("armOriginPolicy", () => {
  it("lets requests to ARM_ENDPOINT through", async () => {
    expect(await passes(`${ARM}${LIST}?api-version=2024-07-01`)).toBe(true);
  });

  it("refuses, terminally and before sending, a request to any other origin, naming both", async () => {
    for (const url of [`https://evil.example${LIST}`, `http://management.azure.com${LIST}`, `${ARM}:8443${LIST}`])
      await expect(passes(url)).rejects.toThrow(FatalError);
    await expect(passes("https://evil.example/x")).rejects.toThrow(
      /refusing to send a request to https:\/\/evil\.example: ARM requests go only to https:\/\/management\.azure\.com/,
    );
  });
});

describe("continuationFor", () => {
  it("keeps a nextLink on ARM for exactly the LIST it was saved for, whatever the path's case", () => {
    const link = `${ARM}${LIST.toLowerCase()}/?api-version=2024-07-01&$skiptoken=abc`;
    expect(continuationFor(link, ARM, LIST)).toBe(link);
  });

  it("drops a link to another host, another LIST, with credentials or a fragment, or not a URL", () => {
    expect(continuationFor(`https://evil.example${LIST}?x`, ARM, LIST)).toBeUndefined();
    expect(continuationFor(`${ARM}${LIST.replace("/rg/", "/other/")}?x`, ARM, LIST)).toBeUndefined();
    expect(continuationFor(`https://u:p@management.azure.com${LIST}`, ARM, LIST)).toBeUndefined();
    expect(continuationFor(`${ARM}${LIST}#frag`, ARM, LIST)).toBeUndefined();
    expect(continuationFor(`${ARM}/subscriptions/%E0%A4%A`, ARM, LIST)).toBeUndefined();
    expect(continuationFor("not a url", ARM, LIST)).toBeUndefined();
    expect(continuationFor(undefined, ARM, LIST)).toBeUndefined();
  });
});
