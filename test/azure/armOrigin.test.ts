import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { TableClient } from "@azure/data-tables";
import { afterEach, describe, expect, it } from "vitest";
import { continuationFor } from "../../src/azure/armOriginPolicy";
import { ArmCompute } from "../../src/azure/compute";
import { armScope, StaticTokenCredential } from "../../src/azure/credentials";
import { CLOUDS } from "../../src/core/clouds";
import { FatalError } from "../../src/core/errors";
import { DEMO, manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { testStorageConnectionString } from "../../devkit/storage";
import { groupsWorld, groupsWorldIds, poolId, WIDE_SUBSCRIPTION } from "../../devkit/worlds";

/**
 * The ARM bearer token goes only to ARM_ENDPOINT: a continuation planted in the timer's state row, or a nextLink
 * the "ARM" answers with on another origin, never reaches that origin. The decoy is a second local HTTPS server with
 * the simulator's certificate (so only the origin differs) that records every request it gets.
 */
const TLS_DIR = path.resolve(__dirname, "../../sim/tls");
const SUB = WIDE_SUBSCRIPTION;

interface Decoy {
  origin: string;
  hits: Array<{ url: string; authorization: string | undefined }>;
  close(): Promise<void>;
}

async function startDecoy(): Promise<Decoy> {
  const hits: Decoy["hits"] = [];
  const server = https.createServer(
    { cert: readFileSync(path.join(TLS_DIR, "cert.pem")), key: readFileSync(path.join(TLS_DIR, "key.pem")) },
    (req, res) => {
      hits.push({ url: req.url ?? "", authorization: req.headers.authorization });
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ value: [] }));
    },
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return { origin: `https://127.0.0.1:${port}`, hits, close: () => new Promise((r) => server.close(() => r())) };
}

/** Forwards to the simulator with the decoy's Host, so the simulator builds its nextLinks on the decoy's origin. */
async function startHostRewriter(
  simUrl: string,
  decoyOrigin: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(simUrl);
  const server = https.createServer(
    { cert: readFileSync(path.join(TLS_DIR, "cert.pem")), key: readFileSync(path.join(TLS_DIR, "key.pem")) },
    (req, res) => {
      const upstream = https.request(
        {
          host: target.hostname,
          port: target.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: new URL(decoyOrigin).host },
          rejectUnauthorized: false,
        },
        (answer: http.IncomingMessage) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(upstream);
    },
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return { url: `https://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
}

describe("the ARM token goes only to ARM_ENDPOINT", () => {
  let h: Harness | undefined;
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await h?.stop();
    h = undefined;
    for (const c of closers.splice(0)) await c();
  });

  it("a continuation planted in the timer's state row is not followed off ARM_ENDPOINT", async () => {
    const decoy = await startDecoy();
    closers.push(decoy.close);
    const clock = manualClock();
    const perGroup = [3];
    h = await startHarness({
      clock,
      cacheEnabled: true,
      sim: { seed: groupsWorld(perGroup, 1) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${SUB}` },
    });
    const ids = groupsWorldIds(perGroup);
    for (const id of ids) {
      await h.send({
        v: 1,
        kind: "declare",
        scaleSetId: id,
        backendPoolId: poolId(SUB, scaleSetRef(id).resourceGroup, "lb", "pool-0"),
        state: "present",
      });
    }
    await h.drainUntilEmpty(60_000);
    const group = `${SUB}/rg-0`.toLowerCase();
    const list = `/subscriptions/${SUB}/resourceGroups/rg-0/providers/Microsoft.Compute/virtualMachineScaleSets`;
    // Whoever can write the cache table plants a continuation to their own host, shaped like ARM's.
    const table = TableClient.fromConnectionString(testStorageConnectionString(), h.config.cacheTable, {
      allowInsecureConnection: true,
    });
    await table.upsertEntity(
      {
        partitionKey: "~timer",
        rowKey: "state",
        notBefore: 0,
        cursor: "",
        resume: JSON.stringify({ group, nextLink: `${decoy.origin}${list}?api-version=2026-03-01&$skiptoken=1` }),
      },
      "Replace",
    );
    clock.advance(3_600_000);
    const run = await h.services.reconcileStale();
    expect(decoy.hits).toEqual([]);
    expect(run.listPages).toBeGreaterThan(0); // the group was listed, from its first page on ARM_ENDPOINT
  }, 120_000);

  it("a nextLink ARM answers on another origin is refused before the request leaves", async () => {
    const decoy = await startDecoy();
    closers.push(decoy.close);
    h = await startHarness({ sim: { listPageSize: 1 } });
    const front = await startHostRewriter(h.sim.url, decoy.origin);
    closers.push(front.close);
    const compute = new ArmCompute({
      endpoint: front.url,
      ca: readFileSync(path.join(TLS_DIR, "cert.pem"), "utf8"),
      credential: new StaticTokenCredential("not-a-real-token"),
      scope: armScope(CLOUDS.AzureCloud),
      clock: manualClock(),
      requestTimeoutMs: 10_000,
      operationMaxWaitMs: 10_000,
      operationPollIntervalMs: 50,
    });
    const err = await compute.listInstances(scaleSetRef(DEMO.scaleSetId)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FatalError);
    expect(String((err as Error).message)).toMatch(/ARM requests go only to/);
    expect(decoy.hits).toEqual([]);
  }, 60_000);
});

describe("continuationFor", () => {
  const arm = "https://management.azure.com";
  const list = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets";
  it("keeps ARM's own link to the same LIST, in any case", () => {
    const link = `${arm}${list.toLowerCase()}?api-version=2026-03-01&$skiptoken=abc`;
    expect(continuationFor(link, arm, list)).toBe(link);
  });
  it.each([
    ["another host", `https://evil.example${list}?$skiptoken=1`],
    ["http on ARM's host", `http://management.azure.com${list}?$skiptoken=1`],
    ["another port", `https://management.azure.com:8443${list}?$skiptoken=1`],
    [
      "another resource group",
      `${arm}/subscriptions/s/resourceGroups/other/providers/Microsoft.Compute/virtualMachineScaleSets?$skiptoken=1`,
    ],
    ["another API under the group", `${arm}${list}/x/virtualMachines?$skiptoken=1`],
    ["credentials in the URL", `https://u:p@management.azure.com${list}?$skiptoken=1`],
    ["not a URL", "%%%"],
  ])("drops %s", (_why, link) => {
    expect(continuationFor(link, arm, list)).toBeUndefined();
  });
});
