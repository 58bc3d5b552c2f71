// Routes of application gateways: GET and the long-running PUT. A gateway's pools have no endpoint of their own.
import { requireAppGateway, renderAppGateway, writeAppGateway } from "../appGateways";
import type { Engine } from "../engine";
import { canonical, type ParsedResourcePath } from "../ids";
import { json, type RequestContext } from "./reply";
import { methodNotAllowed, networkWriteContext, networkWriteReply } from "./networkRouteKit";
import { parseBody, type Route } from "./routeKit";

export function resolveAppGatewayRoute(engine: Engine, ctx: RequestContext, p: ParsedResourcePath): Route | undefined {
  const seg = p.providerSegments.map((s) => s.toLowerCase());
  if (p.resourceGroup === undefined || seg[0] !== "microsoft.network" || seg[1] !== "applicationgateways")
    return undefined;
  if (seg.length !== 3) return undefined;
  const sub = p.subscriptionId;
  const rg = p.resourceGroup;
  const name = p.providerSegments[2] ?? "";
  const method = ctx.method;
  const key = canonical(ctx.url.pathname);
  const arm = method === "GET" ? "reads" : method === "DELETE" ? "deletes" : "writes";
  const base = { statsKey: key, arm, subscriptionId: sub } as const;
  if (method === "GET")
    return {
      ...base,
      kind: "networkGets",
      handle: () => {
        const agw = requireAppGateway(engine, sub, rg, name);
        return json(200, renderAppGateway(engine, agw), { etag: agw.etag });
      },
    };
  if (method === "PUT") {
    const existing = engine.state.appGateways.get(key);
    return {
      ...base,
      kind: "networkPuts",
      ...(existing ? { writeTarget: existing.id } : {}),
      handle: (c: RequestContext) =>
        networkWriteReply(
          engine,
          c,
          writeAppGateway(engine, sub, rg, name, parseBody(c.bodyText), networkWriteContext(engine, c)),
        ),
    };
  }
  return { ...base, kind: undefined, handle: () => methodNotAllowed(method) };
}
