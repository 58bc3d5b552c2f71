import { describe, expect, it } from "vitest";
import { ResourceOwnerTable } from "../../src/azure/resourceOwnerTable";
import { encodeKey } from "../../src/core/tableKeys";
import { freshTable } from "../support/freshTable";
import { nicRefOf, scaleSetRef } from "../support/refs";

const RG = "/subscriptions/00000000-aaaa-4bbb-8ccc-000000000458/resourceGroups/rg/providers";
const nic = nicRefOf(`${RG}/Microsoft.Network/networkInterfaces/nic-0`);
const vmssA = scaleSetRef(`${RG}/Microsoft.Compute/virtualMachineScaleSets/vmss-a`);
const vmssB = scaleSetRef(`${RG}/Microsoft.Compute/virtualMachineScaleSets/vmss-b`);

describe("ResourceOwnerTable on Azurite", () => {
  it("tells another process which target caches a NIC, and nothing of a NIC no target cached", async () => {
    const table = await freshTable("owners");
    await new ResourceOwnerTable(table).remember(nic, vmssA);
    const other = new ResourceOwnerTable(table);
    expect((await other.ownerOf(nic))?.key).toBe(vmssA.key);
    expect(await other.ownerOf(nicRefOf(`${RG}/Microsoft.Network/networkInterfaces/nic-9`))).toBeUndefined();
  });

  it("records a change of owner", async () => {
    const table = await freshTable("owners");
    const owners = new ResourceOwnerTable(table);
    await owners.remember(nic, vmssA);
    await owners.remember(nic, vmssB);
    expect((await new ResourceOwnerTable(table).ownerOf(nic))?.key).toBe(vmssB.key);
  });

  it("takes a row whose target does not parse as no owner", async () => {
    const table = await freshTable("owners");
    await table.upsertEntity({ partitionKey: "~owners", rowKey: encodeKey(nic.key), targetId: "/not/a/target" });
    expect(await new ResourceOwnerTable(table).ownerOf(nic)).toBeUndefined();
  });
});
