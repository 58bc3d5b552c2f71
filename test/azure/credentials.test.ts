import { DefaultAzureCredential, ManagedIdentityCredential } from "@azure/identity";
import { describe, expect, it } from "vitest";
import { armCredential, credentialOptions, StaticTokenCredential } from "../../src/azure/credentials";
import { CLOUDS } from "../../src/core/clouds";

const cloud = CLOUDS.AzureUSGovernment;
const CLIENT_ID = "00000000-aaaa-4bbb-8ccc-000000000454";

describe("armCredential", () => {
  it("static: hands out the configured token and remembers each audience asked for once", async () => {
    const c = armCredential({ armCredential: "static", armStaticToken: "not-a-real-token", cloud });
    expect(c).toBeInstanceOf(StaticTokenCredential);
    expect((await c.getToken(["https://a/.default", "https://b/.default"]))?.token).toBe("not-a-real-token");
    await c.getToken("https://a/.default");
    expect((c as StaticTokenCredential).scopesAsked).toEqual(["https://a/.default", "https://b/.default"]);
  });

  it("managedIdentity and default: the platform's identity, or the SDK's chain of sources", () => {
    const mi = armCredential({ armCredential: "managedIdentity", armStaticToken: "", armClientId: CLIENT_ID, cloud });
    expect(mi).toBeInstanceOf(ManagedIdentityCredential);
    expect(armCredential({ armCredential: "default", armStaticToken: "", cloud })).toBeInstanceOf(
      DefaultAzureCredential,
    );
  });
});

describe("credentialOptions", () => {
  it("names the cloud's authority host, and the user-assigned identity only when one is configured", () => {
    expect(credentialOptions({ cloud, armClientId: CLIENT_ID })).toEqual({
      authorityHost: cloud.authorityHost,
      managedIdentityClientId: CLIENT_ID,
    });
    expect(credentialOptions({ cloud })).toStrictEqual({ authorityHost: cloud.authorityHost });
  });
});
