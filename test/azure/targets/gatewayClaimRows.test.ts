import { describe, expect, it } from "vitest";
import { memoryLogger } from "../../../src/app/logger";
import { GatewayClaimTable } from "../../../src/azure/targets/gatewayClaimRows";
import { gatewayClaimsRowKey, targetPartition } from "../../../src/azure/targets/rowKeys";
import { freshTargetStore } from "../../support/freshTable";
import { scaleSetRef } from "../../support/refs";

const RG = "/subscriptions/00000000-aaaa-4bbb-8ccc-000000000467/resourceGroups/rg/providers";
const REF = scaleSetRef(`${RG}/Microsoft.Compute/virtualMachineScaleSets/vmss`);
const POOL = `${RG}/Microsoft.Network/applicationGateways/gw/backendAddressPools/web`;
const claim = (i: number) => ({ name: `vmss_${i}`, ipAddress: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}` });

describe("GatewayClaimTable on Azurite", () => {
  it("reads back a target's claims on a pool, a full pool's spread over several columns", async () => {
    const store = await freshTargetStore(() => 0);
    const claims = new GatewayClaimTable(store, memoryLogger());
    const record = { claims: Array.from({ length: 1_200 }, (_, i) => claim(i)) };
    await claims.write(REF, POOL, record);
    expect(await claims.read(REF, POOL.toUpperCase())).toEqual(record);
    const row = await store.table.getEntity<{ parts: number }>(targetPartition(REF), gatewayClaimsRowKey(POOL));
    expect(row.parts).toBeGreaterThan(1);
  });

  it("keeps a write in doubt, and a shorter record replaces a longer one", async () => {
    const claims = new GatewayClaimTable(await freshTargetStore(() => 0), memoryLogger());
    await claims.write(REF, POOL, { claims: Array.from({ length: 1_200 }, (_, i) => claim(i)) });
    const doubt = { claims: [claim(1)], doubt: { ifMatch: 'W/"1"', sent: ["10.0.0.2"], claims: [claim(2)] } };
    await claims.write(REF, POOL, doubt);
    expect(await claims.read(REF, POOL)).toEqual(doubt);
  });

  it("reads no claims where none were written, and a row that does not decode as none, logged", async () => {
    const store = await freshTargetStore(() => 0);
    const log = memoryLogger();
    const claims = new GatewayClaimTable(store, log);
    expect(await claims.read(REF, POOL)).toEqual({ claims: [] });
    await store.table.upsertEntity({
      partitionKey: targetPartition(REF),
      rowKey: gatewayClaimsRowKey(POOL),
      parts: 1,
      claims0: '{"claims":[{"name":"","ipAddress":"x"}]}',
    });
    expect(await claims.read(REF, POOL)).toEqual({ claims: [] });
    expect(log.lines).toEqual([
      expect.objectContaining({ level: "warn", event: "storage.row-unusable", targetId: REF.id }),
    ]);
  });
});
