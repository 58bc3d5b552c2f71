// Writes to load balancers and their backend pools, from the API and from the control API's other writer: a load
// balancer PUT (the whole load balancer, its pools and NAT pools), a pool PUT (that pool, whole), a pool DELETE. Each
// gives the load balancer a new weak ETag (a pool's ETag is its load balancer's, so every pool's moves), runs an NRP
// operation (Azure-AsyncOperation; recorded) and publishes its event when that ends.
import { randomUUID } from "node:crypto";
import { ArmError, badRequest, invalidReference, resourceNotFound } from "./errors";
import { canonical, LB_TYPE, loadBalancerId } from "./ids";
import { deepEqual, getPath, isJsonObject, type JsonObject } from "./json";
import { storedChildren } from "./childResources";
import { learnVirtualNetwork, natPoolId, natPoolsOf, STORED_COLLECTIONS } from "./lbModel";
import { renderLoadBalancer, renderPool } from "./network";
import {
  checkLocation,
  checkNrpPreconditions,
  outcomeOf,
  type NetworkHost,
  type NetworkWriteContext,
  type NetworkWriteOutcome,
} from "./networkWrites";
import { newWeakEtag } from "./nics";
import type { NrpOperationName } from "./nrpOperations";
import type { Operation } from "./operations";
import { acceptPoolBody } from "./poolBodies";
import { isReferenced } from "./poolReferences";
import type { LoadBalancerRecord, PoolRecord } from "./state";

export const OP_LB_WRITE = "Microsoft.Network/loadBalancers/write";
export const OP_POOL_WRITE = "Microsoft.Network/loadBalancers/backendAddressPools/write";
export const OP_POOL_DELETE = "Microsoft.Network/loadBalancers/backendAddressPools/delete";

export function findLoadBalancer(host: NetworkHost, sub: string, rg: string, name: string) {
  host.requireResourceGroup(sub, rg);
  return host.state.loadBalancers.get(canonical(loadBalancerId(sub, rg, name)));
}

export function requireLoadBalancer(host: NetworkHost, sub: string, rg: string, name: string): LoadBalancerRecord {
  const lb = findLoadBalancer(host, sub, rg, name);
  if (!lb) throw resourceNotFound(LB_TYPE, name, rg);
  return lb;
}

const inUse = (code: string, what: string, id: string): ArmError =>
  // NRP refuses to drop what ip configurations use; its code and text are not public, so both are chosen.
  badRequest(code, `${what} ${id} is in use by ip configurations or a scale set model and cannot be deleted.`);

/** NAT rules NRP derived from a NAT pool (`<pool>.<n>`), which a client may echo back in a PUT: not stored. */
function isDerivedNatRule(rule: JsonObject, natPoolNames: Set<string>): boolean {
  const name = String(rule["name"] ?? "");
  const dot = name.lastIndexOf(".");
  return dot > 0 && natPoolNames.has(name.slice(0, dot).toLowerCase()) && /^\d+$/.test(name.slice(dot + 1));
}

const FRONTEND_READ_ONLY = [
  ["properties", "inboundNatRules"],
  ["properties", "inboundNatPools"],
  ["properties", "outboundRules"],
  ["properties", "loadBalancingRules"],
];
const NAT_RULE_READ_ONLY = [["properties", "backendIPConfiguration"]];
const NAT_POOL_REQUIRED = ["protocol", "frontendPortRangeStart", "frontendPortRangeEnd", "backendPort"];

function orThrow<T>(value: T | ArmError): T {
  if (value instanceof ArmError) throw value;
  return value;
}

/** Starts the write's operation and holds the load balancer for it (cancelling what it supersedes); `onEnd` runs
 *  when it ends. */
function startOperation(
  host: NetworkHost,
  lb: LoadBalancerRecord,
  ctx: NetworkWriteContext,
  admitted: (op: Operation) => void,
  onEnd: (op: Operation) => void,
): Operation {
  const op = host.operations.start(
    {
      subscriptionId: lb.subscriptionId,
      location: lb.location,
      resourceId: lb.id,
      durationMs: ctx.durationMs ?? host.settings.loadBalancerWriteMs,
    },
    onEnd,
  );
  admitted(op);
  return op;
}

/** NRP's lock on the load balancer: a pool write holds it as a write of a child, which a load balancer PUT supersedes. */
function admit(host: NetworkHost, lbId: string, name: NrpOperationName, child: boolean, ctx: NetworkWriteContext) {
  return host.nrpLocks.admit(
    lbId,
    { name, child, at: { base: ctx.base, apiVersion: ctx.apiVersion } },
    { supersede: host.settings.supersedeRunningNetworkWrite },
  );
}

/** PUT of a load balancer: the body replaces it whole (read-only and derived fields aside). */
export function writeLoadBalancer(
  host: NetworkHost,
  sub: string,
  rg: string,
  name: string,
  body: JsonObject,
  ctx: NetworkWriteContext,
): NetworkWriteOutcome {
  const group = host.requireResourceGroup(sub, rg);
  const id = loadBalancerId(host.requireSubscription(sub).id, group.name, name);
  const existing = host.state.loadBalancers.get(canonical(id));
  checkNrpPreconditions(existing, ctx, id);
  checkLocation(body["location"], existing, LB_TYPE, group.name);
  const admitted = admit(host, id, "PutLoadBalancerOperation", false, ctx);

  const propsIn = body["properties"];
  const props = isJsonObject(propsIn) ? propsIn : {};
  const sku = getPath(body, "sku", "name");
  const draft: LoadBalancerRecord = {
    id,
    name,
    location: existing?.location ?? String(body["location"]),
    resourceGroup: group.name,
    subscriptionId: host.requireSubscription(sub).id,
    etag: existing?.etag ?? "",
    resourceGuid: existing?.resourceGuid ?? randomUUID(),
    skuName: typeof sku === "string" ? sku : (existing?.skuName ?? "Standard"),
    pools: [],
    ...(existing?.virtualNetworkId ? { virtualNetworkId: existing.virtualNetworkId } : {}),
  };

  const natPools = orThrow(storedChildren(props["inboundNatPools"], "properties.inboundNatPools"));
  natPools.forEach((p, i) => {
    for (const field of NAT_POOL_REQUIRED)
      if (getPath(p, "properties", field) === undefined)
        throw badRequest("InvalidRequestFormat", `properties.inboundNatPools[${i}].properties.${field} is required.`);
  });
  const natNames = new Set(natPools.map((p) => String(p["name"]).toLowerCase()));
  const stored: JsonObject = {};
  for (const collection of STORED_COLLECTIONS) {
    const readOnly =
      collection === "frontendIPConfigurations"
        ? FRONTEND_READ_ONLY
        : collection === "inboundNatRules"
          ? NAT_RULE_READ_ONLY
          : [["properties", "loadBalancingRules"]];
    const items = orThrow(storedChildren(props[collection], `properties.${collection}`, readOnly));
    stored[collection] = collection === "inboundNatRules" ? items.filter((r) => !isDerivedNatRule(r, natNames)) : items;
  }
  for (const f of stored["frontendIPConfigurations"] as JsonObject[]) {
    const subnet = getPath(f, "properties", "subnet", "id");
    if (typeof subnet === "string" && !host.state.subnet(subnet)) throw invalidReference(subnet, id);
  }
  const { backendAddressPools: _p, inboundNatPools: _n, provisioningState: _s, resourceGuid: _g, ...rest } = props;
  for (const c of STORED_COLLECTIONS) delete rest[c];
  draft.body = {
    ...(body["tags"] !== undefined ? { tags: structuredClone(body["tags"]) } : {}),
    properties: { ...structuredClone(rest), ...stored },
  };
  draft.natPools = natPools;

  const poolsIn = orThrow(storedChildren(props["backendAddressPools"], "properties.backendAddressPools"));
  for (const p of poolsIn) {
    const poolName = String(p["name"]);
    const before = existing?.pools.find((x) => x.name.toLowerCase() === poolName.toLowerCase());
    const accepted = acceptPoolBody(host.state, draft, poolName, before, p, ctx.apiVersion);
    draft.pools.push({
      id: before?.id ?? `${id}/backendAddressPools/${poolName}`,
      name: before?.name ?? poolName,
      etag: "",
      addresses: accepted.addresses,
      properties: accepted.properties,
      ...(accepted.kind ? { kind: accepted.kind } : {}),
      // A pool made here is made with its load balancer; one the pool API made stays so.
      ...(before?.madeWithPoolApi ? { madeWithPoolApi: true } : {}),
    });
  }
  if (existing) {
    const kept = new Set(draft.pools.map((p) => canonical(p.id)));
    for (const p of existing.pools)
      if (!kept.has(canonical(p.id)) && isReferenced(host.state, p.id, "loadBalancerBackendAddressPools"))
        throw inUse("InUseBackendAddressPoolCannotBeDeleted", "Backend address pool", p.id);
    for (const p of natPoolsOf(existing)) {
      const natId = natPoolId(existing, String(p["name"]));
      if (
        !natNames.has(String(p["name"]).toLowerCase()) &&
        isReferenced(host.state, natId, "loadBalancerInboundNatPools")
      )
        throw inUse("InUseInboundNatPoolCannotBeDeleted", "Inbound NAT pool", natId);
    }
  }

  const lb = existing ?? draft;
  if (existing) Object.assign(existing, { skuName: draft.skuName, body: draft.body, natPools, pools: draft.pools });
  else host.state.loadBalancers.set(canonical(id), lb);
  learnVirtualNetwork(lb);
  lb.etag = newWeakEtag();
  const created = !existing;
  const op = startOperation(host, lb, ctx, admitted, (done) => {
    host.emit("Write", outcomeOf(done), ctx.resourceUri, OP_LB_WRITE, ctx.writer, created);
  });
  // Recorded: a load balancer PUT answers Succeeded (and an operation to poll), even when it created it.
  return { status: created ? 201 : 200, body: renderLoadBalancer(host.state, lb, ctx.apiVersion), operation: op };
}

function findPool(lb: LoadBalancerRecord, name: string): PoolRecord | undefined {
  return lb.pools.find((p) => p.name.toLowerCase() === name.toLowerCase());
}

/** PUT of a backend pool: the body replaces the pool whole; the pool's ETag is its load balancer's. */
export function writeBackendPool(
  host: NetworkHost,
  lb: LoadBalancerRecord,
  poolName: string,
  body: JsonObject,
  ctx: NetworkWriteContext,
): NetworkWriteOutcome {
  const existing = findPool(lb, poolName);
  const id = existing?.id ?? `${lb.id}/backendAddressPools/${poolName}`;
  checkNrpPreconditions(existing ? { etag: lb.etag, id: lb.id } : undefined, ctx, id);
  const admitted = admit(host, lb.id, "PutLoadBalancerBackendAddressPoolOperation", true, ctx);
  const accepted = acceptPoolBody(host.state, lb, poolName, existing, body, ctx.apiVersion);
  const changed =
    !existing ||
    !deepEqual(existing.addresses ?? [], accepted.addresses) ||
    !deepEqual(existing.properties ?? {}, accepted.properties);
  const pool: PoolRecord = existing ?? { id, name: poolName, etag: "", madeWithPoolApi: true };
  pool.addresses = accepted.addresses;
  pool.properties = accepted.properties;
  if (accepted.kind) pool.kind = accepted.kind;
  if (!existing) lb.pools.push(pool);
  learnVirtualNetwork(lb);
  lb.etag = newWeakEtag();
  // Recorded: a pool PUT that creates answers Updating, one that changes nothing Succeeded; both run an operation.
  pool.provisioningState = changed ? "Updating" : "Succeeded";
  const op = startOperation(host, lb, ctx, admitted, (done) => {
    if (findPool(lb, poolName) === pool) pool.provisioningState = done.status === "Failed" ? "Failed" : "Succeeded";
    host.emit("Write", outcomeOf(done), ctx.resourceUri, OP_POOL_WRITE, ctx.writer, !existing);
  });
  const rendered = renderPool(host.state, lb, poolName, ctx.apiVersion) as JsonObject;
  return { status: existing ? 200 : 201, body: rendered, operation: op };
}

/** DELETE of a backend pool (undefined: there was none, ARM answers 204). */
export function deleteBackendPool(
  host: NetworkHost,
  lb: LoadBalancerRecord,
  poolName: string,
  ctx: NetworkWriteContext,
): NetworkWriteOutcome | undefined {
  const pool = findPool(lb, poolName);
  if (!pool) return undefined;
  checkNrpPreconditions({ etag: lb.etag, id: lb.id }, ctx, pool.id);
  const admitted = admit(host, lb.id, "DeleteLoadBalancerBackendAddressPoolOperation", true, ctx);
  if (isReferenced(host.state, pool.id, "loadBalancerBackendAddressPools"))
    throw inUse("InUseBackendAddressPoolCannotBeDeleted", "Backend address pool", pool.id);
  lb.pools = lb.pools.filter((p) => p !== pool);
  lb.etag = newWeakEtag();
  const op = startOperation(host, lb, ctx, admitted, (done) => {
    host.emit("Delete", outcomeOf(done), ctx.resourceUri, OP_POOL_DELETE, ctx.writer);
  });
  return { status: 202, operation: op, withLocation: true };
}
