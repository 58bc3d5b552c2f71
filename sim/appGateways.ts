// Network RP application gateways: the gateway is one resource with its own weak ETag, written whole by a long-running
// PUT; its backend pools list `backendAddresses` (IP or FQDN) and, read-only, the `backendIPConfigurations` of the
// scale set instances and NICs whose ip configurations reference the pool (`applicationGatewayBackendAddressPools`).
// Gateway pools have no endpoint of their own (the REST API has none): they are written through the gateway.
import { isIP } from "node:net";
import { randomUUID } from "node:crypto";
import { ArmError, badRequest, resourceNotFound } from "./errors";
import { renderChild, storedChildren } from "./childResources";
import { AGW_TYPE, applicationGatewayId, canonical } from "./ids";
import { isJsonObject, type Json, type JsonObject } from "./json";
import { withoutReadOnly, type ReadOnlyPath } from "./merge";
import {
  checkLocation,
  checkNrpPreconditions,
  outcomeOf,
  type NetworkHost,
  type NetworkWriteContext,
  type NetworkWriteOutcome,
} from "./networkWrites";
import { newWeakEtag } from "./nics";
import { isReferenced, referencingIpConfigurations } from "./poolReferences";
import type { AppGatewayRecord } from "./state";

export const OP_AGW_WRITE = "Microsoft.Network/applicationGateways/write";

const GATEWAY_READ_ONLY: readonly ReadOnlyPath[] = [
  ["id"],
  ["name"],
  ["type"],
  ["etag"],
  ["location"],
  ["properties", "provisioningState"],
  ["properties", "resourceGuid"],
  ["properties", "operationalState"],
];
const POOL_READ_ONLY: readonly ReadOnlyPath[] = [["properties", "backendIPConfigurations"]];

export function findAppGateway(host: NetworkHost, sub: string, rg: string, name: string) {
  host.requireResourceGroup(sub, rg);
  return host.state.appGateways.get(canonical(applicationGatewayId(sub, rg, name)));
}

export function requireAppGateway(host: NetworkHost, sub: string, rg: string, name: string): AppGatewayRecord {
  const agw = findAppGateway(host, sub, rg, name);
  if (!agw) throw resourceNotFound(AGW_TYPE, name, rg);
  return agw;
}

/** A property holding child resources: an array of objects that each have a name. */
function isChildCollection(v: Json | undefined): v is JsonObject[] {
  return Array.isArray(v) && v.length > 0 && v.every((x) => isJsonObject(x) && typeof x["name"] === "string");
}

export function gatewayPools(agw: AppGatewayRecord): JsonObject[] {
  const props = agw.body["properties"];
  const pools = isJsonObject(props) ? props["backendAddressPools"] : undefined;
  return Array.isArray(pools) ? pools.filter(isJsonObject) : [];
}

export function gatewayPoolId(agw: AppGatewayRecord, name: string): string {
  return `${agw.id}/backendAddressPools/${name}`;
}

/** The collections NRP answers even when empty (ApplicationGatewayCreate/Get examples). */
const GATEWAY_COLLECTIONS = [
  "gatewayIPConfigurations",
  "authenticationCertificates",
  "trustedRootCertificates",
  "trustedClientCertificates",
  "sslCertificates",
  "frontendIPConfigurations",
  "frontendPorts",
  "probes",
  "backendAddressPools",
  "backendHttpSettingsCollection",
  "backendSettingsCollection",
  "httpListeners",
  "listeners",
  "sslProfiles",
  "urlPathMaps",
  "requestRoutingRules",
  "routingRules",
  "rewriteRuleSets",
  "redirectConfigurations",
  "privateLinkConfigurations",
  "privateEndpointConnections",
  "loadDistributionPolicies",
];

export function renderAppGateway(host: Pick<NetworkHost, "state">, agw: AppGatewayRecord): JsonObject {
  const { properties, ...rest } = agw.body;
  const props: JsonObject = {
    ...Object.fromEntries(GATEWAY_COLLECTIONS.map((c) => [c, []])),
    ...(isJsonObject(properties) ? structuredClone(properties) : {}),
  };
  const parent = { id: agw.id, type: AGW_TYPE, etag: agw.etag };
  for (const [key, value] of Object.entries(props)) {
    if (!isChildCollection(value)) continue;
    props[key] = value.map((item) => {
      if (key !== "backendAddressPools") return renderChild(parent, key, item);
      const members = referencingIpConfigurations(
        host.state,
        gatewayPoolId(agw, String(item["name"])),
        "applicationGatewayBackendAddressPools",
      );
      return renderChild(
        parent,
        key,
        item,
        "Succeeded",
        members.length > 0 ? { backendIPConfigurations: members.map((m) => ({ id: m.id })) } : {},
      );
    });
  }
  return {
    name: agw.name,
    id: agw.id,
    etag: agw.etag,
    type: AGW_TYPE,
    location: agw.location,
    ...structuredClone(rest),
    properties: {
      provisioningState: agw.provisioningState,
      resourceGuid: agw.resourceGuid,
      operationalState: "Running",
      ...props,
    },
  };
}

/** A backend address is an IP address or an FQDN. */
function checkBackendAddresses(pool: JsonObject, field: string): void {
  const addresses = isJsonObject(pool["properties"]) ? pool["properties"]["backendAddresses"] : undefined;
  if (addresses === undefined) return;
  if (!Array.isArray(addresses))
    throw badRequest("InvalidRequestFormat", `${field}.properties.backendAddresses must be an array.`);
  addresses.forEach((a, i) => {
    const at = `${field}.properties.backendAddresses[${i}]`;
    if (!isJsonObject(a)) throw badRequest("InvalidRequestFormat", `${at} must be an object with ipAddress or fqdn.`);
    const ip = a["ipAddress"];
    const fqdn = a["fqdn"];
    if ((ip === undefined) === (fqdn === undefined))
      throw badRequest("InvalidRequestFormat", `${at} must have exactly one of ipAddress and fqdn.`);
    if (ip !== undefined && (typeof ip !== "string" || isIP(ip) === 0))
      throw badRequest("InvalidRequestFormat", `${at}.ipAddress ${JSON.stringify(ip)} is not an IP address.`);
    if (fqdn !== undefined && (typeof fqdn !== "string" || fqdn.trim() === ""))
      throw badRequest("InvalidRequestFormat", `${at}.fqdn must be a non-empty string.`);
  });
}

/** The gateway body as it will be stored, or NRP's 400. */
function acceptGatewayBody(host: NetworkHost, agw: AppGatewayRecord | undefined, body: JsonObject): JsonObject {
  const stored = withoutReadOnly(body, GATEWAY_READ_ONLY);
  const props = stored["properties"];
  if (props !== undefined && !isJsonObject(props))
    throw badRequest("InvalidRequestFormat", "properties must be an object.");
  const p = isJsonObject(props) ? props : {};
  for (const [key, value] of Object.entries(p)) {
    if (!Array.isArray(value) || !value.some((x) => isJsonObject(x) && "name" in x)) continue;
    const items = storedChildren(value, `properties.${key}`, key === "backendAddressPools" ? POOL_READ_ONLY : []);
    if (items instanceof ArmError) throw items;
    if (key === "backendAddressPools")
      items.forEach((pool, i) => checkBackendAddresses(pool, `properties.${key}[${i}]`));
    p[key] = items;
  }
  if (agw) {
    const kept = new Set(
      (Array.isArray(p["backendAddressPools"]) ? p["backendAddressPools"] : []).map((x) =>
        String((x as JsonObject)["name"]).toLowerCase(),
      ),
    );
    for (const pool of gatewayPools(agw)) {
      const poolId = gatewayPoolId(agw, String(pool["name"]));
      if (
        !kept.has(String(pool["name"]).toLowerCase()) &&
        isReferenced(host.state, poolId, "applicationGatewayBackendAddressPools")
      )
        // NRP's code and text for this are not public: chosen.
        throw badRequest(
          "InUseApplicationGatewayBackendAddressPoolCannotBeDeleted",
          `Application gateway backend address pool ${poolId} is in use by ip configurations or a scale set model and cannot be deleted.`,
        );
    }
  }
  return { ...stored, properties: p };
}

/** PUT of an application gateway: the body replaces it whole; a long-running operation (`appGatewayWriteMs`). */
export function writeAppGateway(
  host: NetworkHost,
  sub: string,
  rg: string,
  name: string,
  body: JsonObject,
  ctx: NetworkWriteContext,
): NetworkWriteOutcome {
  const group = host.requireResourceGroup(sub, rg);
  const id = applicationGatewayId(host.requireSubscription(sub).id, group.name, name);
  const existing = host.state.appGateways.get(canonical(id));
  checkNrpPreconditions(existing, ctx, id);
  checkLocation(body["location"], existing, AGW_TYPE, group.name);
  const admitted = host.nrpLocks.admit(
    id,
    { name: "PutApplicationGatewayOperation", at: { base: ctx.base, apiVersion: ctx.apiVersion } },
    { supersede: host.settings.supersedeRunningNetworkWrite },
  );
  const stored = acceptGatewayBody(host, existing, body);
  const agw: AppGatewayRecord = existing ?? {
    id,
    subscriptionId: host.requireSubscription(sub).id,
    resourceGroup: group.name,
    name,
    location: String(body["location"]),
    body: {},
    etag: "",
    resourceGuid: randomUUID(),
    provisioningState: "Updating",
  };
  agw.body = stored;
  agw.etag = newWeakEtag();
  agw.provisioningState = "Updating";
  if (!existing) host.state.appGateways.set(canonical(id), agw);
  const op = host.operations.start(
    {
      subscriptionId: agw.subscriptionId,
      location: agw.location,
      resourceId: agw.id,
      durationMs: ctx.durationMs ?? host.settings.appGatewayWriteMs,
    },
    (done) => {
      if (host.state.appGateways.get(canonical(id)) === agw)
        agw.provisioningState = done.status === "Failed" ? "Failed" : "Succeeded";
      host.emit("Write", outcomeOf(done), ctx.resourceUri, OP_AGW_WRITE, ctx.writer, !existing);
    },
  );
  admitted(op);
  return { status: existing ? 200 : 201, body: renderAppGateway(host, agw), operation: op };
}
