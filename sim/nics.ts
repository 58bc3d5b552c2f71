// Network RP network interfaces: the resource that holds the pool membership of a Flexible scale set's VMs and of
// standalone VMs. NRP differs from CRP: weak ETags `W/"<guid>"`, a new one on every write; PUT replaces the whole
// resource (what is left out is gone); a mismatch answers 412 with the PreconditionFailedEtagMismatch detail.
import { randomUUID } from "node:crypto";
import { ArmError, armError, badRequest, invalidReference, nrpEtagValue } from "./errors";
import { canonical, NIC_TYPE } from "./ids";
import { getPath, isJsonObject, type Json, type JsonObject } from "./json";
import { withoutReadOnly, type ReadOnlyPath } from "./merge";
import { poolReferenceError } from "./poolRefChecks";
import { ipConfigurations, poolIdsOf } from "./scaleSets";
import type { NicRecord, SimState } from "./state";

export type { NicRecord } from "./state";

/** Server-owned fields of a NIC: ignored when a PUT carries them back. */
export const NIC_READ_ONLY: readonly ReadOnlyPath[] = [
  ["id"],
  ["name"],
  ["type"],
  ["etag"],
  ["location"],
  ["kind"],
  ["properties", "provisioningState"],
  ["properties", "resourceGuid"],
  ["properties", "macAddress"],
  ["properties", "virtualMachine"],
  ["properties", "primary"],
  ["properties", "hostedWorkloads"],
  ["properties", "vnetEncryptionSupported"],
];

const IP_CONFIGURATION_READ_ONLY: readonly ReadOnlyPath[] = [
  ["id"],
  ["etag"],
  ["type"],
  ["properties", "provisioningState"],
];

export const newWeakEtag = (): string => `W/"${randomUUID()}"`;

/** NRP's 412: a generic message, the mismatch in the detail. */
export function nrpPreconditionFailed(provided: string, actual: string, id: string): ArmError {
  return new ArmError(412, {
    error: {
      code: "PreconditionFailed",
      message: "Precondition failed.",
      details: [
        {
          code: "PreconditionFailedEtagMismatch",
          message: `Etag provided in if-match header ${provided} does not match etag ${actual} of resource ${id} in NRP data store.`,
        },
      ],
    },
  });
}

/** If-Match as NRP applies it: the stored weak ETag exactly as answered, or `*` (NICs, load balancers, gateways). */
export function checkNicPrecondition(
  nic: { etag: string; id: string } | undefined,
  ifMatch: string | undefined,
  id: string,
): void {
  if (ifMatch === undefined) return;
  const wanted = nrpEtagValue(ifMatch);
  if (!nic)
    throw armError(
      412,
      "PreconditionFailed",
      `Etag provided in if-match header ${wanted} does not match: the resource ${id} does not exist.`,
    );
  if (wanted !== "*" && wanted !== nic.etag) throw nrpPreconditionFailed(wanted, nic.etag, nic.id);
}

export function nicIpConfigs(body: JsonObject): Json[] {
  const v = getPath(body, "properties", "ipConfigurations");
  return Array.isArray(v) ? v : [];
}

/** A PUT body as stored: read-only fields dropped, in the NIC and in each ip configuration. */
export function incomingNicBody(body: JsonObject): JsonObject {
  const out = withoutReadOnly(body, NIC_READ_ONLY);
  const ipcs = getPath(out, "properties", "ipConfigurations");
  if (Array.isArray(ipcs) && isJsonObject(out["properties"])) {
    out["properties"]["ipConfigurations"] = ipcs.map((c) =>
      isJsonObject(c) ? withoutReadOnly(c, IP_CONFIGURATION_READ_ONLY) : c,
    );
  }
  return out;
}

/**
 * What NRP refuses in a NIC body: no ip configuration, a reference to a subnet or pool that does not exist, or one
 * pool on ip configurations of different IP versions.
 */
export function nicBodyError(state: SimState, id: string, body: JsonObject): ArmError | undefined {
  const ipcs = ipConfigurations([{ name: "nic", properties: { ipConfigurations: nicIpConfigs(body) } }]);
  if (ipcs.length === 0)
    return badRequest(
      "NetworkInterfaceMustHaveAtLeastOneIpConfiguration",
      `Network interface ${id} must have at least one IP configuration.`,
    );
  const versionOfPool = new Map<string, string>();
  for (const { ipc } of ipcs) {
    const subnet = getPath(ipc, "properties", "subnet", "id");
    if (typeof subnet === "string" && !state.subnet(subnet)) return invalidReference(subnet, id);
    const version = String(getPath(ipc, "properties", "privateIPAddressVersion") ?? "IPv4");
    for (const pool of poolIdsOf(ipc)) {
      if (!state.pool(pool)) return invalidReference(pool, id);
      const seen = versionOfPool.get(canonical(pool));
      if (seen !== undefined && seen !== version)
        return badRequest(
          "LoadBalancerBackendAddressPoolReferencedByIpConfigurationsOfDifferentIpVersions",
          `Backend address pool ${pool} is referenced by ip configurations of network interface ${id} with different IP versions (${seen}, ${version}).`,
        );
      versionOfPool.set(canonical(pool), version);
    }
  }
  return poolReferenceError(
    state,
    ipcs.map(({ name, ipc }) => ({ ipc, id: `${id}/ipConfigurations/${name}` })),
    id,
    ["loadBalancerBackendAddressPools", "applicationGatewayBackendAddressPools"],
  );
}

/** The NIC as NRP answers it: ip configurations with their IDs, every child carrying the NIC's ETag. */
export function renderNic(nic: NicRecord): JsonObject {
  const { properties, ...rest } = nic.body;
  const props = isJsonObject(properties) ? structuredClone(properties) : {};
  const ipcs = nicIpConfigs(nic.body).map((c) => {
    if (!isJsonObject(c)) return c;
    const name = String(c["name"] ?? "");
    const p = isJsonObject(c["properties"]) ? structuredClone(c["properties"]) : {};
    return {
      name,
      id: `${nic.id}/ipConfigurations/${name}`,
      etag: nic.etag,
      type: `${NIC_TYPE}/ipConfigurations`,
      properties: { provisioningState: nic.provisioningState, ...p },
    };
  });
  return {
    name: nic.name,
    id: nic.id,
    etag: nic.etag,
    type: NIC_TYPE,
    location: nic.location,
    kind: "Regular",
    ...structuredClone(rest),
    properties: {
      provisioningState: nic.provisioningState,
      resourceGuid: nic.resourceGuid,
      ...props,
      ipConfigurations: ipcs,
      macAddress: nic.macAddress,
      ...(nic.primary !== undefined ? { primary: nic.primary } : {}),
      ...(nic.virtualMachineId ? { virtualMachine: { id: nic.virtualMachineId } } : {}),
    },
  };
}

let macCounter = 0;
export function nextMacAddress(): string {
  macCounter++;
  return `00-0D-3A-${((macCounter >> 16) & 0xff).toString(16).padStart(2, "0")}-${((macCounter >> 8) & 0xff).toString(16).padStart(2, "0")}-${(macCounter & 0xff).toString(16).padStart(2, "0")}`.toUpperCase();
}
