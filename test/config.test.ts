import { randomBytes, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config";

const base = {
  POOLSYNC_SCOPES: "/subscriptions/0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d",
  POOLSYNC_BINDINGS: "*",
  AzureWebJobsStorage: "UseDevelopmentStorage=true",
};

describe("config", () => {
  it("fills every default", () => {
    const c = loadConfig(base);
    expect(c).toMatchObject({
      armEndpoint: "https://management.azure.com",
      armCredential: "default",
      queueName: "backendpool-updates",
      poisonQueueName: "backendpool-updates-poison",
      cacheTtlMs: 600_000,
      cacheEnabled: true,
      reconcileMaxReads: 200,
    });
    expect(c.scopes).toEqual([
      {
        id: "/subscriptions/0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d",
        subscriptionId: "0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d",
      },
    ]);
    expect(c.storage.kind).toBe("connectionString");
  });

  it("picks the static token for the simulator and identity-based storage from __accountName", () => {
    const c = loadConfig({
      POOLSYNC_SCOPES: base.POOLSYNC_SCOPES,
      POOLSYNC_BINDINGS: "*",
      ARM_ENDPOINT: "http://127.0.0.1:18443/",
      AzureWebJobsStorage__accountName: "poolsyncdata",
      AzureWebJobsStorage__clientId: "client",
    });
    expect(c.armEndpoint).toBe("http://127.0.0.1:18443");
    expect(c.armCredential).toBe("static");
    expect(c.storage).toEqual({
      kind: "identity",
      tableServiceUri: "https://poolsyncdata.table.core.windows.net",
      queueServiceUri: "https://poolsyncdata.queue.core.windows.net",
      clientId: "client",
    });
  });

  it("auto sends the simulator's static token only to loopback, never to another cloud's ARM", () => {
    const auto = (ARM_ENDPOINT: string) => loadConfig({ ...base, ARM_ENDPOINT }).armCredential;
    expect(auto("https://management.usgovcloudapi.net")).toBe("default");
    expect(auto("https://management.chinacloudapi.cn")).toBe("default");
    expect(auto("https://arm.example.internal:8443")).toBe("default");
    expect(auto("https://127.0.0.1:18443")).toBe("static");
    expect(auto("https://localhost:18443")).toBe("static");
    expect(auto("https://[::1]:18443")).toBe("static");
    expect(auto("https://127.example.com")).toBe("default");
  });

  it("in App Service, auto means the managed identity (the ARM one named by AZURE_CLIENT_ID), not whatever DefaultAzureCredential finds first", () => {
    const c = loadConfig({
      ...base,
      IDENTITY_ENDPOINT: "http://localhost:8081/msi/token",
      AZURE_CLIENT_ID: "00000000-0000-0000-0000-0000000000a1",
    });
    expect(c.armCredential).toBe("managedIdentity");
    expect(c.armClientId).toBe("00000000-0000-0000-0000-0000000000a1");
    expect(
      loadConfig({
        ...base,
        IDENTITY_ENDPOINT: "http://localhost:8081/msi/token",
        ARM_ENDPOINT: "https://127.0.0.1:18443",
      }).armCredential,
    ).toBe("static");
  });

  it("names every missing or malformed setting at once", () => {
    let message = "";
    try {
      loadConfig({ POOLSYNC_CACHE_TTL_SECONDS: "ten", POOLSYNC_CACHE_ENABLED: "maybe", POOLSYNC_QUEUE: "Bad_Queue" });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      message = (err as Error).message;
    }
    expect(message).toContain("POOLSYNC_SCOPES is required");
    expect(message).toContain('POOLSYNC_CACHE_TTL_SECONDS="ten" must be a whole number');
    expect(message).toContain('POOLSYNC_CACHE_ENABLED="maybe" must be true or false');
    expect(message).toContain('POOLSYNC_QUEUE="Bad_Queue" must be a valid Storage queue name');
    expect(message).toContain("AzureWebJobsStorage is required");
  });

  it("refuses one table for both the targets and the shared store: the shared table's upgrade sweep deletes target-shaped partitions", () => {
    expect(() =>
      loadConfig({ ...base, POOLSYNC_MEMBERSHIPS_TABLE: "poolsync", POOLSYNC_CACHE_TABLE: "PoolSync" }),
    ).toThrow(/POOLSYNC_CACHE_TABLE: must name another table than POOLSYNC_MEMBERSHIPS_TABLE/);
  });

  it("refuses a scope that is not a subscription or resource group", () => {
    expect(() => loadConfig({ ...base, POOLSYNC_SCOPES: "/subscriptions/nope" })).toThrow(
      'POOLSYNC_SCOPES="/subscriptions/nope" "/subscriptions/nope": subscription "nope" is not a GUID',
    );
  });
});

describe("POOLSYNC_CACHE_KEY", () => {
  const refusal = (key: string) => {
    try {
      loadConfig({ ...base, POOLSYNC_CACHE_KEY: key });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as Error).message;
      // The setting is named, the key itself never shown.
      expect(message).not.toContain(key);
      return message.split("\n").find((l) => l.includes("POOLSYNC_CACHE_KEY"));
    }
    return undefined;
  };
  const advice =
    "; use at least 32 random characters (e.g. openssl rand -base64 48), or leave it empty for a random key per process";

  it.each([
    ["too short", "k3Jq9vX2mPz8", "is 12 characters long; it must be at least 32 random characters"],
    [
      "a placeholder",
      "please-CHANGE_ME-before-production!!",
      'looks like a placeholder (it contains "changeme"), not a random key',
    ],
    [
      "a sample value",
      "<your-secret-cache-key-goes-here-ok>",
      'looks like a placeholder (it contains "secret"), not a random key',
    ],
    ["one character", "a".repeat(40), "repeats a 1-character pattern"],
    ["a short pattern repeated", "0123456789abcdef".repeat(2), "repeats a 16-character pattern"],
    ["a run", "abcdefghijklmnopqrstuvwxyz012345", 'is mostly one run of 26 characters (like "aaaa" or "abcd")'],
    [
      "few bits",
      "ab".repeat(12) + "ba".repeat(4) + "aab",
      "has about 34 bits of entropy by its character counts, fewer than 64",
    ],
  ])("%s is refused at load, naming the setting and why", (_name, key, why) => {
    expect(refusal(key)).toBe(`- POOLSYNC_CACHE_KEY is weak: it ${why}${advice}`);
  });

  it("random keys pass: base64, hex, two GUIDs (the template's default), the local runtime's; empty means a key per process", () => {
    for (const key of [
      randomBytes(24).toString("base64"),
      randomBytes(16).toString("hex"),
      `${randomUUID()}${randomUUID()}`,
      randomBytes(48).toString("base64url"),
      "",
    ])
      expect(loadConfig({ ...base, POOLSYNC_CACHE_KEY: key }).cacheKey).toBe(key);
  });
});
