// A backend pool as a PUT (of the pool, or inside its load balancer) writes it: full replacement of the pool, checked
// as NRP checks it. Which checks are NRP's own and which are chosen is listed in sim/README.md.
import { isIP } from "node:net";
import { acceptAdminState } from "./adminState";
import { ArmError, badRequest, invalidReference } from "./errors";
import { canonical } from "./ids";
import { getPath, isJsonObject, type Json, type JsonObject } from "./json";
import { withoutReadOnly, type ReadOnlyPath } from "./merge";
import { addressVirtualNetwork, lbVirtualNetworkId } from "./lbModel";
import { isIpAddressEntry, type PoolKind } from "./poolKinds";
import { cannotMixPoolKinds } from "./poolRefChecks";
import { isReferenced, referencingIpConfigurations } from "./poolReferences";
import type { LoadBalancerRecord, PoolRecord, SimState } from "./state";

/** Derived by NRP, ignored in a body. */
const POOL_READ_ONLY: readonly ReadOnlyPath[] = [
  ["backendIPConfigurations"],
  ["loadBalancingRules"],
  ["outboundRule"],
  ["outboundRules"],
  ["inboundNatRules"],
  ["provisioningState"],
  ["loadBalancerBackendAddresses"],
];
const ADDRESS_READ_ONLY: readonly ReadOnlyPath[] = [
  ["properties", "networkInterfaceIPConfiguration"],
  ["properties", "inboundNatRulesPortMapping"],
];

export interface AcceptedPool {
  addresses: JsonObject[];
  properties: JsonObject;
  kind?: PoolKind;
}

const invalid = (field: string, reason: string): ArmError => badRequest("InvalidRequestFormat", `${field} ${reason}`);

/** IPv4 `ip` inside CIDR `prefix` (IPv6 prefixes are not checked). */
function inIpv4Prefix(ip: string, prefix: string): boolean {
  const [net, bits] = prefix.split("/");
  if (isIP(ip) !== 4 || !net || isIP(net) !== 4) return true;
  const toInt = (a: string) => a.split(".").reduce((n, o) => ((n << 8) | Number(o)) >>> 0, 0);
  const n = Number(bits ?? 32);
  const mask = n === 0 ? 0 : (0xffffffff << (32 - n)) >>> 0;
  return (toInt(ip) & mask) === (toInt(net) & mask);
}

function checkAddress(
  state: SimState,
  lb: LoadBalancerRecord,
  poolVnet: string | undefined,
  lbVnet: string | undefined,
  a: JsonObject,
  field: string,
): ArmError | string | undefined {
  const props = isJsonObject(a["properties"]) ? a["properties"] : {};
  if (props["loadBalancerFrontendIPConfiguration"] !== undefined) return undefined; // a global LB's regional frontend
  const ip = props["ipAddress"];
  if (typeof ip !== "string") return invalid(`${field}.properties.ipAddress`, "is required (an IP address).");
  if (isIP(ip) === 0) return invalid(`${field}.properties.ipAddress`, `"${ip}" is not an IP address.`);
  const own = addressVirtualNetwork(a);
  // Azure accepts the virtual network on the pool or on each address, not both (terraform-provider-azurerm PR 26309).
  if (poolVnet && getPath(props, "virtualNetwork") !== undefined)
    return invalid(`${field}.properties.virtualNetwork`, "must not be given when the pool names its virtualNetwork.");
  const subnet = getPath(props, "subnet", "id");
  if (typeof subnet === "string" && !state.subnet(subnet)) return invalidReference(subnet, lb.id);
  const vnetId = own ?? poolVnet;
  if (!vnetId)
    return invalid(`${field}.properties`, "needs a virtualNetwork or subnet (or the pool's virtualNetwork).");
  const vnet = state.virtualNetworks.get(canonical(vnetId));
  if (!vnet) return invalidReference(vnetId, lb.id);
  if (lbVnet && canonical(lbVnet) !== canonical(vnetId))
    return badRequest(
      "LoadBalancerBackendAddressNotInLoadBalancerVirtualNetwork",
      `Backend address ${field} (${ip}) is in virtual network ${vnetId}, but load balancer ${lb.id} is in virtual network ${lbVnet}: IP-based backends must be in the load balancer's virtual network.`,
    );
  if (!vnet.addressPrefixes.some((p) => inIpv4Prefix(ip, p)))
    return badRequest(
      "PrivateIPAddressNotInVirtualNetworkAddressSpace",
      `Backend address ${field} (${ip}) is not in the address space (${vnet.addressPrefixes.join(", ")}) of virtual network ${vnetId}.`,
    );
  return ip;
}

/**
 * The pool as it will be stored, or NRP's 400. `pool` is the pool as it is (undefined for a new one): its declared
 * kind and its members decide whether addresses may be written at all.
 */
export function acceptPoolBody(
  state: SimState,
  lb: LoadBalancerRecord,
  name: string,
  pool: PoolRecord | undefined,
  body: JsonObject,
  apiVersion: string,
): AcceptedPool {
  const propsIn = body["properties"];
  if (propsIn !== undefined && !isJsonObject(propsIn)) throw invalid("properties", "must be an object.");
  const props = isJsonObject(propsIn) ? propsIn : {};
  const rawAddresses: Json = props["loadBalancerBackendAddresses"] ?? [];
  if (!Array.isArray(rawAddresses)) throw invalid("properties.loadBalancerBackendAddresses", "must be an array.");
  const properties = withoutReadOnly(props, POOL_READ_ONLY);
  const sync = properties["syncMode"];
  if (sync !== undefined) {
    const mode =
      typeof sync === "string"
        ? ["Automatic", "Manual"].find((m) => m.toLowerCase() === sync.toLowerCase())
        : undefined;
    if (!mode) throw invalid("properties.syncMode", `"${String(sync)}" is not one of Automatic, Manual.`);
    properties["syncMode"] = mode;
    // A pool with syncMode names its virtual network (terraform-provider-azurerm PR 26309).
    if (getPath(properties, "virtualNetwork", "id") === undefined)
      throw invalid("properties.virtualNetwork", "is required when syncMode is given.");
  }
  const poolVnetRaw = getPath(properties, "virtualNetwork", "id");
  const poolVnet = typeof poolVnetRaw === "string" ? poolVnetRaw : undefined;
  if (poolVnet && !state.virtualNetworks.get(canonical(poolVnet))) throw invalidReference(poolVnet, lb.id);
  const lbVnet = lbVirtualNetworkId(lb, name);
  if (poolVnet && lbVnet && canonical(poolVnet) !== canonical(lbVnet))
    throw badRequest(
      "LoadBalancerBackendAddressNotInLoadBalancerVirtualNetwork",
      `Backend address pool ${name} names virtual network ${poolVnet}, but load balancer ${lb.id} is in virtual network ${lbVnet}.`,
    );

  const addresses: JsonObject[] = [];
  const names = new Set<string>();
  const ips = new Set<string>();
  for (const [i, raw] of rawAddresses.entries()) {
    const field = `properties.loadBalancerBackendAddresses[${i}]`;
    if (!isJsonObject(raw) || typeof raw["name"] !== "string" || raw["name"] === "")
      throw invalid(`${field}.name`, "is required (a non-empty string).");
    if (names.has(raw["name"].toLowerCase())) throw invalid(`${field}.name`, `"${raw["name"]}" is given twice.`);
    names.add(raw["name"].toLowerCase());
    const a = withoutReadOnly(raw, ADDRESS_READ_ONLY);
    const checked = checkAddress(state, lb, poolVnet, lbVnet, a, field);
    if (checked instanceof ArmError) throw checked;
    if (checked !== undefined) {
      if (ips.has(checked)) throw invalid(`${field}.properties.ipAddress`, `${checked} is given twice.`);
      ips.add(checked);
    }
    const aProps = isJsonObject(a["properties"]) ? a["properties"] : undefined;
    if (aProps && "adminState" in aProps) {
      const admin = acceptAdminState(aProps["adminState"], apiVersion, `${field}.properties.adminState`);
      if (admin === undefined) delete aProps["adminState"];
      else aProps["adminState"] = admin;
    }
    addresses.push(a);
  }

  const poolId = `${lb.id}/backendAddressPools/${name}`;
  const withIps = addresses.some(isIpAddressEntry);
  if (withIps) {
    if (lb.skuName.toLowerCase() === "basic")
      throw badRequest(
        "IPBasedBackendAddressPoolNotSupportedOnBasicLoadBalancer",
        `Backend address pool ${poolId} lists IP addresses: IP-based backend pools need a Standard load balancer.`,
      );
    // syncMode Automatic keeps the addresses NRP-managed (azure-cli issue 29715 answered 400 to an address added).
    if (properties["syncMode"] === "Automatic" || pool?.kind === "nic")
      throw cannotMixPoolKinds(poolId, "it is NIC-based, and the body lists IP addresses");
    const member = referencingIpConfigurations(state, poolId, "loadBalancerBackendAddressPools")[0];
    if (member)
      throw cannotMixPoolKinds(poolId, `ip configuration ${member.id} is in it, and the body lists IP addresses`);
    if (isReferenced(state, poolId, "loadBalancerBackendAddressPools"))
      throw cannotMixPoolKinds(poolId, "a scale set model references it, and the body lists IP addresses");
  }
  const kind: PoolKind | undefined =
    properties["syncMode"] === "Manual" ? "ip" : properties["syncMode"] === "Automatic" ? "nic" : pool?.kind;
  return { addresses, properties, ...(kind ? { kind } : {}) };
}
