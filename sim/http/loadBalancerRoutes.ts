// Routes of load balancers (GET, PUT), their backend pools (list; GET, PUT, DELETE) and NRP's operationResults (a
// delete's Location). NRP's own 404 for a missing pool (recorded), ARM's for a missing load balancer.
import type { Engine } from "../engine";
import { canonical, type ParsedResourcePath } from "../ids";
import { deleteBackendPool, requireLoadBalancer, writeBackendPool, writeLoadBalancer } from "../lbWrites";
import { renderLoadBalancer, renderPool } from "../network";
import { json, type RequestContext } from "./reply";
import { methodNotAllowed, networkWriteContext, networkWriteReply, operationResultReply } from "./networkRouteKit";
import { page, parseBody, type Route } from "./routeKit";

export function resolveLoadBalancerRoute(
  engine: Engine,
  ctx: RequestContext,
  p: ParsedResourcePath,
): Route | undefined {
  const seg = p.providerSegments.map((s) => s.toLowerCase());
  const sub = p.subscriptionId;
  const method = ctx.method;
  const key = canonical(ctx.url.pathname);
  const arm = method === "GET" ? "reads" : method === "DELETE" ? "deletes" : "writes";
  const base = { statsKey: key, arm, subscriptionId: sub } as const;
  const kind = method === "GET" ? "networkGets" : method === "DELETE" ? "networkDeletes" : "networkPuts";

  if (p.resourceGroup === undefined) {
    if (seg[0] === "microsoft.network" && seg[1] === "locations" && seg[3] === "operationresults" && seg.length === 5) {
      const id = p.providerSegments[4] ?? "";
      const op = engine.operations.get(id);
      if (method !== "GET") return { ...base, kind: undefined, handle: () => methodNotAllowed(method) };
      return {
        ...base,
        kind: "operationGets",
        ...(op ? { statsKey: canonical(op.resourceId) } : {}),
        handle: (c) => operationResultReply(engine, id, c),
      };
    }
    return undefined;
  }
  if (seg[0] !== "microsoft.network" || seg[1] !== "loadbalancers" || seg.length < 3) return undefined;
  const rg = p.resourceGroup;
  const lbName = p.providerSegments[2] ?? "";
  const lbKey = canonical(
    `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.Network/loadBalancers/${lbName}`,
  );
  const existing = engine.state.loadBalancers.get(lbKey);

  if (seg.length === 3) {
    if (method === "GET")
      return {
        ...base,
        kind,
        handle: (c) => {
          const lb = requireLoadBalancer(engine, sub, rg, lbName);
          return json(200, renderLoadBalancer(engine.state, lb, c.apiVersion), { etag: lb.etag });
        },
      };
    if (method === "PUT")
      return {
        ...base,
        kind,
        ...(existing ? { writeTarget: existing.id } : {}),
        handle: (c) =>
          networkWriteReply(
            engine,
            c,
            writeLoadBalancer(engine, sub, rg, lbName, parseBody(c.bodyText), networkWriteContext(engine, c)),
          ),
      };
    return { ...base, kind: undefined, handle: () => methodNotAllowed(method) };
  }
  if (seg[3] !== "backendaddresspools") return undefined;
  if (seg.length === 4)
    return method === "GET"
      ? {
          ...base,
          kind,
          handle: (c) => {
            const lb = requireLoadBalancer(engine, sub, rg, lbName);
            return page(
              engine,
              c,
              lb.pools.map((pool) => renderPool(engine.state, lb, pool.name, c.apiVersion) ?? {}),
            );
          },
        }
      : { ...base, kind: undefined, handle: () => methodNotAllowed(method) };
  if (seg.length !== 5) return undefined;
  const poolName = p.providerSegments[4] ?? "";
  const pool = existing?.pools.find((x) => x.name.toLowerCase() === poolName.toLowerCase());
  switch (method) {
    case "GET":
      return {
        ...base,
        kind,
        handle: (c) => {
          const lb = requireLoadBalancer(engine, sub, rg, lbName);
          const rendered = renderPool(engine.state, lb, poolName, c.apiVersion);
          // NRP's own 404 (recorded), not ARM's ResourceNotFound: the path as requested, `details: []`.
          if (!rendered)
            return json(404, {
              error: {
                code: "NotFound",
                message: `Resource ${decodeURIComponent(c.url.pathname)} not found.`,
                details: [],
              },
            });
          return json(200, rendered, { etag: lb.etag });
        },
      };
    case "PUT":
      return {
        ...base,
        kind,
        ...(pool ? { writeTarget: pool.id } : {}),
        handle: (c) => {
          const lb = requireLoadBalancer(engine, sub, rg, lbName);
          return networkWriteReply(
            engine,
            c,
            writeBackendPool(engine, lb, poolName, parseBody(c.bodyText), networkWriteContext(engine, c)),
          );
        },
      };
    case "DELETE":
      return {
        ...base,
        kind,
        handle: (c) => {
          const lb = requireLoadBalancer(engine, sub, rg, lbName);
          const out = deleteBackendPool(engine, lb, poolName, networkWriteContext(engine, c));
          return out ? networkWriteReply(engine, c, out) : { status: 204, headers: {} };
        },
      };
    default:
      return { ...base, kind: undefined, handle: () => methodNotAllowed(method) };
  }
}
