import { afterEach, describe, expect, it } from "vitest";
import { accountFor } from "../../bench/accounting";
import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { tableClient } from "../../src/azure/storageClients";
import { TargetDeclarations } from "../../src/azure/targets/targetDeclarations";
import { targetStoreOn } from "../support/freshTable";
import { startTableCounter, type TableCounter } from "../support/tableCounter";

/**
 * The benchmark's account of the changes that did not show, read from poolsync's own rows after the run. An hour's
 * run at load 15 died there: one Table read outlived POOLSYNC_TABLE_TIMEOUT_SECONDS, its AbortError ended the process
 * and the hour's figures were never written. A read that fails is one change's account unknown, not the run's end.
 */
const SUB = "00000000-0000-4000-8000-0000000000ac";
const change = {
  id: 7,
  scaleSetId: `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-0`,
  poolId: `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/p0`,
  state: "present" as const,
};

let hop: TableCounter | undefined;
afterEach(async () => {
  await hop?.stop();
  hop = undefined;
});

/** poolsync's declarations as the app reads them, through a hop that can hold an answer past the client's timeout. */
async function declarationsBehindHop(timeoutMs: number) {
  const storage = testStorageConnectionString();
  hop = await startTableCounter(/TableEndpoint=([^;]+)/.exec(storage)![1]!);
  const conn = storage.replace(/TableEndpoint=[^;]+/, `TableEndpoint=${hop.endpoint}`);
  const table = tableClient({ kind: "connectionString", connectionString: conn }, uniqueName("acct"), [], timeoutMs);
  await table.createTable();
  return new TargetDeclarations(targetStoreOn(table, Date.now));
}

describe("the benchmark's account of a change that did not show", () => {
  it("reads poolsync's rows: a target never declared says no declaration", async () => {
    const declarations = await declarationsBehindHop(5_000);
    const [account] = await accountFor([change], { declarations });
    expect(account).toMatchObject({ id: 7, outcome: "no declaration" });
  });

  it("a read that times out leaves that change unread, naming why, and the others still accounted for", async () => {
    const declarations = await declarationsBehindHop(300);
    let held = 1;
    hop!.fault = ({ method }) => (method === "GET" && held-- > 0 ? { kind: "slow", ms: 2_000 } : undefined);
    const [first, second] = await accountFor([change, { ...change, id: 8 }], { declarations });
    expect(first).toMatchObject({ id: 7, outcome: "unread" });
    expect(first!.reason).toMatch(/abort/i);
    expect(second).toMatchObject({ id: 8, outcome: "no declaration" });
  });
});
