// Scale set and instance models: rendering to ARM JSON, read-only fields, building instances from the model, and the
// references (subnets, backend pools) a model makes.
import { randomUUID } from "node:crypto";
import { VMSS_TYPE, VMSS_VM_TYPE } from "./ids";
import { deepEqual, getPath, isJsonObject, type Json, type JsonObject } from "./json";
import type { ReadOnlyPath } from "./merge";
import type { InstanceRecord, ScaleSetRecord } from "./state";

/** Server-owned fields of a scale set: ignored when a body carries them. */
export const SCALE_SET_READ_ONLY: readonly ReadOnlyPath[] = [
  ["id"],
  ["name"],
  ["type"],
  ["etag"],
  ["systemData"],
  ["properties", "provisioningState"],
  ["properties", "uniqueId"],
  ["properties", "timeCreated"],
];

/** Also ignored on an update: the location of an existing resource does not change. */
export const SCALE_SET_IMMUTABLE: readonly ReadOnlyPath[] = [["location"]];

export const INSTANCE_READ_ONLY: readonly ReadOnlyPath[] = [
  ["id"],
  ["name"],
  ["type"],
  ["etag"],
  ["location"],
  ["instanceId"],
  ["sku"],
  ["zones"],
  ["plan"],
  ["resources"],
  ["systemData"],
  ["identity"],
  // CRP drops tags sent on an instance (recorded: the ETag stays, charge 0).
  ["tags"],
  ["properties", "latestModelApplied"],
  ["properties", "vmId"],
  ["properties", "instanceView"],
  ["properties", "provisioningState"],
  ["properties", "modelDefinitionApplied"],
  ["properties", "timeCreated"],
  ["properties", "virtualMachineResourceId"],
  // Derived from networkProfileConfiguration: the NIC resources the instance has.
  ["properties", "networkProfile"],
];

export function modelNicConfigs(model: JsonObject): Json[] {
  const v = getPath(model, "properties", "virtualMachineProfile", "networkProfile", "networkInterfaceConfigurations");
  return Array.isArray(v) ? v : [];
}

export function instanceNicConfigs(inst: InstanceRecord): Json[] {
  const v = getPath(inst.body, "properties", "networkProfileConfiguration", "networkInterfaceConfigurations");
  return Array.isArray(v) ? v : [];
}

export interface UpgradePolicy {
  mode: "manual" | "automatic" | "rolling";
  /** Rolling: share of the instances upgraded per batch (Azure's default 20). */
  maxBatchInstancePercent: number;
}

export function upgradePolicyOf(model: JsonObject): UpgradePolicy {
  const mode = String(getPath(model, "properties", "upgradePolicy", "mode") ?? "Manual").toLowerCase();
  const pct = getPath(model, "properties", "upgradePolicy", "rollingUpgradePolicy", "maxBatchInstancePercent");
  return {
    mode: mode === "automatic" ? "automatic" : mode === "rolling" ? "rolling" : "manual",
    maxBatchInstancePercent: typeof pct === "number" && pct > 0 ? Math.min(100, pct) : 20,
  };
}

export function capacityOf(model: JsonObject): number {
  const c = getPath(model, "sku", "capacity");
  return typeof c === "number" ? c : 0;
}

/** The virtualMachineProfile without its networkProfile: what else an instance inherits from the model. */
export function profileWithoutNetwork(model: JsonObject): JsonObject {
  const profile = getPath(model, "properties", "virtualMachineProfile");
  if (!isJsonObject(profile)) return {};
  const { networkProfile: _ignored, ...rest } = profile;
  return structuredClone(rest);
}

/** Uniform scale sets name computers `<prefix><instance id in base 36, 6 digits>`. */
export function computerName(prefix: string, instanceId: number): string {
  return `${prefix}${instanceId.toString(36).padStart(6, "0")}`;
}

/** A new instance built from the scale set's model as it is now. */
export function newInstance(ss: ScaleSetRecord, instanceId: number, nowIso: string): InstanceRecord {
  const profile = profileWithoutNetwork(ss.body);
  const properties: JsonObject = {
    networkProfileConfiguration: { networkInterfaceConfigurations: structuredClone(modelNicConfigs(ss.body)) },
  };
  const osProfile = profile["osProfile"];
  if (isJsonObject(osProfile)) {
    const { computerNamePrefix, ...rest } = osProfile;
    properties["osProfile"] = {
      computerName: computerName(typeof computerNamePrefix === "string" ? computerNamePrefix : ss.name, instanceId),
      ...structuredClone(rest),
    };
  }
  const storageProfile = profile["storageProfile"];
  if (storageProfile !== undefined) properties["storageProfile"] = structuredClone(storageProfile);
  const sku = getPath(ss.body, "sku");
  return {
    id: `${ss.id}/virtualMachines/${instanceId}`,
    instanceId: String(instanceId),
    body: { properties },
    etag: 1,
    vmId: randomUUID(),
    timeCreated: nowIso,
    sku: { name: String(getPath(sku, "name") ?? "Standard_D2s_v3"), tier: String(getPath(sku, "tier") ?? "Standard") },
    profileSnapshot: profile,
    provisioningState: "Creating",
    deleting: false,
  };
}

/** True when the instance still matches the scale set's model: its NICs and the rest of the profile. */
export function latestModelApplied(ss: ScaleSetRecord, inst: InstanceRecord): boolean {
  return (
    deepEqual(inst.profileSnapshot, profileWithoutNetwork(ss.body)) &&
    deepEqual(instanceNicConfigs(inst), modelNicConfigs(ss.body))
  );
}

export function renderScaleSet(ss: ScaleSetRecord): JsonObject {
  const { properties, location, ...rest } = ss.body;
  return {
    id: ss.id,
    name: ss.name,
    type: VMSS_TYPE,
    location: location ?? ss.location,
    ...structuredClone(rest),
    etag: `"${ss.etag}"`,
    properties: {
      ...(isJsonObject(properties) ? structuredClone(properties) : {}),
      provisioningState: ss.provisioningState,
      uniqueId: ss.uniqueId,
      timeCreated: ss.timeCreated,
    },
  };
}

export function renderInstance(ss: ScaleSetRecord, inst: InstanceRecord): JsonObject {
  const { properties, ...rest } = inst.body;
  const nics = instanceNicConfigs(inst)
    .map((n) => getPath(n, "name"))
    .filter((n): n is string => typeof n === "string");
  return {
    id: inst.id,
    name: `${ss.name}_${inst.instanceId}`,
    type: VMSS_VM_TYPE,
    location: ss.location,
    ...structuredClone(rest),
    instanceId: inst.instanceId,
    etag: `"${inst.etag}"`,
    sku: structuredClone(inst.sku),
    properties: {
      latestModelApplied: latestModelApplied(ss, inst),
      modelDefinitionApplied: "VirtualMachineScaleSet",
      hardwareProfile: { vmSize: String(inst.sku["name"] ?? "Standard_D2s_v3") },
      resilientVMDeletionStatus: "Disabled",
      vmId: inst.vmId,
      ...(isJsonObject(properties) ? structuredClone(properties) : {}),
      networkProfile: { networkInterfaces: nics.map((n) => ({ id: `${inst.id}/networkInterfaces/${n}` })) },
      provisioningState: inst.provisioningState,
      timeCreated: inst.timeCreated,
    },
  };
}

/** Each ip configuration in a list of NIC configurations, with its NIC's name. */
export function ipConfigurations(nics: Json[]): { nic: string; name: string; ipc: JsonObject }[] {
  const out: { nic: string; name: string; ipc: JsonObject }[] = [];
  for (const nic of nics) {
    const nicName = getPath(nic, "name");
    const ipcs = getPath(nic, "properties", "ipConfigurations");
    if (typeof nicName !== "string" || !Array.isArray(ipcs)) continue;
    for (const ipc of ipcs) {
      const name = getPath(ipc, "name");
      if (isJsonObject(ipc) && typeof name === "string") out.push({ nic: nicName, name, ipc });
    }
  }
  return out;
}

function refIds(value: Json | undefined): string[] {
  if (!Array.isArray(value)) return [];
  return value.map((r) => getPath(r, "id")).filter((id): id is string => typeof id === "string");
}

/** Subnet and backend pool IDs a list of NIC configurations references. */
export function references(nics: Json[]): { subnets: string[]; pools: string[] } {
  const subnets: string[] = [];
  const pools: string[] = [];
  for (const { ipc } of ipConfigurations(nics)) {
    const subnet = getPath(ipc, "properties", "subnet", "id");
    if (typeof subnet === "string") subnets.push(subnet);
    pools.push(...refIds(getPath(ipc, "properties", "loadBalancerBackendAddressPools")));
  }
  return { subnets, pools };
}

export function poolIdsOf(ipc: JsonObject): string[] {
  return refIds(getPath(ipc, "properties", "loadBalancerBackendAddressPools"));
}
