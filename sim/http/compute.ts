// Routes of the simulated ARM endpoint: scale sets, their instances, operations, and the Network reads. Resolving a
// route says what the request is (for stats, throttling and interleaving) before it is handled.
import { badRequest, emptyIfMatch, invalidInstanceId, routeNotFound, resourceNotFound } from "../errors";
import { claimsFromToken, type Writer } from "../events";
import { canonical, parseResourcePath, VNET_TYPE } from "../ids";
import type { Engine, WriteContext, WriteOutcome } from "../engine";
import { renderSubnet, renderVirtualNetwork } from "../network";
import { Operations } from "../operations";
import { renderInstance, renderScaleSet } from "../scaleSets";
import type { RequestKind } from "../stats";
import { resolveAppGatewayRoute } from "./appGatewayRoutes";
import { resolveLoadBalancerRoute } from "./loadBalancerRoutes";
import { resolveNicAndVmRoute } from "./network";
import { resolveVmssNicRoute } from "./vmssNicRoutes";
import { json, type Reply, type RequestContext } from "./reply";
import { page, parseBody, type Route } from "./routeKit";

export type { Route } from "./routeKit";

type Handler = (ctx: RequestContext) => Reply;

export function resolveRoute(engine: Engine, ctx: RequestContext): Route {
  const path = ctx.url.pathname;
  const p = parseResourcePath(path);
  const key = canonical(path);
  const method = ctx.method;
  const arm = method === "GET" ? "reads" : method === "DELETE" ? "deletes" : "writes";
  const notFound = (): Route => ({
    kind: undefined,
    statsKey: key,
    arm,
    handle: () => {
      throw routeNotFound(path);
    },
  });
  if (!p) return notFound();
  const network =
    resolveLoadBalancerRoute(engine, ctx, p) ??
    resolveAppGatewayRoute(engine, ctx, p) ??
    resolveVmssNicRoute(engine, ctx, p);
  if (network) return network;
  const nicOrVm = resolveNicAndVmRoute(engine, ctx, p);
  if (nicOrVm) return nicOrVm;
  const seg = p.providerSegments.map((s) => s.toLowerCase());
  const sub = p.subscriptionId;
  const base: Pick<Route, "statsKey" | "arm" | "subscriptionId" | "compute"> = {
    statsKey: key,
    arm,
    subscriptionId: sub,
    ...(seg[0] === "microsoft.compute" ? { compute: true } : {}),
  };
  const only = (m: string, kind: RequestKind, handle: Handler): Route =>
    method === m ? { ...base, kind, handle } : methodNotAllowed(base, method);

  // Operation resource: /subscriptions/{s}/providers/Microsoft.Compute/locations/{loc}/operations/{id}
  if (p.resourceGroup === undefined) {
    if (seg[0] === "microsoft.compute" && seg[1] === "locations" && seg[3] === "operations" && seg.length === 5) {
      // Polls count under the resource the operation writes, so a scale set's stats include its polls.
      const op = engine.operations.get(p.providerSegments[4] ?? "");
      const r = only("GET", "operationGets", (c) => operationReply(engine, p.providerSegments[4] ?? "", c));
      const opKey = op ? canonical(op.resourceId) : key;
      return {
        ...r,
        statsKey: opKey,
        policy: {
          names: ["GetOperation"],
          resourceKey: opKey,
          regionKey: `${sub.toLowerCase()}|${(p.providerSegments[2] ?? "").toLowerCase()}`,
        },
      };
    }
    if (seg[0] === "microsoft.compute" && seg[1] === "virtualmachinescalesets" && seg.length === 2) {
      return {
        ...only("GET", "lists", (c) => {
          engine.requireSubscription(sub);
          const all = [...engine.state.scaleSets.values()].filter(
            (s) => s.subscriptionId.toLowerCase() === sub.toLowerCase(),
          );
          return page(engine, c, all.map(renderScaleSet));
        }),
        policy: { names: ["HighCostGetVMScaleSet"], resourceKey: key, regionKey: `${sub.toLowerCase()}|all` },
      };
    }
    return notFound();
  }
  const rg = p.resourceGroup;
  const rgRecord = engine.state.resourceGroup(sub, rg);
  const regionKey = `${sub.toLowerCase()}|${(rgRecord?.location ?? "").toLowerCase()}`;

  if (seg[0] === "microsoft.compute" && seg[1] === "virtualmachinescalesets") {
    const name = p.providerSegments[2];
    if (name === undefined) {
      return {
        ...only("GET", "lists", (c) => {
          engine.requireResourceGroup(sub, rg);
          const inRg = [...engine.state.scaleSets.values()].filter(
            (s) =>
              s.subscriptionId.toLowerCase() === sub.toLowerCase() &&
              s.resourceGroup.toLowerCase() === rg.toLowerCase(),
          );
          return page(engine, c, inRg.map(renderScaleSet));
        }),
        policy: { names: ["HighCostGetVMScaleSet"], resourceKey: key, regionKey },
      };
    }
    const ssKey = canonical(
      `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.Compute/virtualMachineScaleSets/${name}`,
    );
    const existing = engine.state.scaleSets.get(ssKey);
    if (seg.length === 3)
      return scaleSetRoute(engine, { ...base, statsKey: ssKey }, method, sub, rg, name, existing?.id, regionKey);
    if (seg[3] === "virtualmachines" && seg.length === 4) {
      return {
        ...only("GET", "instanceLists", (c) => {
          const ss = engine.requireScaleSet(sub, rg, name);
          const answer = page(
            engine,
            c,
            [...ss.instances.values()].map((i) => renderInstance(ss, i)),
          );
          // Recorded: CRP states the charge of a VM LIST.
          return { ...answer, headers: { ...answer.headers, "x-ms-request-charge": "1" } };
        }),
        // A high-cost read shared with the scale set LIST, plus one view per VM in the answer.
        policy: { names: ["HighCostGetVMScaleSet", "VMScaleSetVMViews"], resourceKey: ssKey, regionKey },
      };
    }
    if (seg[3] === "virtualmachines" && seg.length === 5) {
      const iid = p.providerSegments[4] ?? "";
      return instanceRoute(
        engine,
        { ...base, statsKey: `${ssKey}/virtualmachines/${iid.toLowerCase()}` },
        method,
        sub,
        rg,
        name,
        iid,
        regionKey,
      );
    }
    if (seg[3] === "manualupgrade" && seg.length === 4) {
      return {
        ...only("POST", "actions", (c) => {
          const ss = engine.requireScaleSet(sub, rg, name);
          const body = parseBody(c.bodyText);
          const ids = body["instanceIds"];
          if (!Array.isArray(ids) || !ids.every((x) => typeof x === "string"))
            throw badRequest("InvalidParameter", "instanceIds is required.");
          return writeReply(engine, c, engine.manualUpgrade(ss, ids as string[], writeContext(engine, c)));
        }),
        policy: { names: ["CreateVMScaleSet"], resourceKey: ssKey, regionKey },
      };
    }
    return notFound();
  }

  if (
    seg[0] === "microsoft.network" &&
    seg[1] === "virtualnetworks" &&
    (seg.length === 3 || (seg.length === 5 && seg[3] === "subnets"))
  ) {
    return only("GET", "networkGets", () => {
      engine.requireResourceGroup(sub, rg);
      const vKey = canonical(
        `/subscriptions/${sub}/resourceGroups/${rg}/providers/${VNET_TYPE}/${p.providerSegments[2] ?? ""}`,
      );
      const vnet = engine.state.virtualNetworks.get(vKey);
      if (!vnet) throw resourceNotFound(VNET_TYPE, p.providerSegments[2] ?? "", rg);
      if (seg.length === 3) return json(200, renderVirtualNetwork(vnet), { etag: vnet.etag });
      const subnet = renderSubnet(vnet, p.providerSegments[4] ?? "");
      if (!subnet) throw resourceNotFound(`${VNET_TYPE}/subnets`, `${vnet.name}/${p.providerSegments[4] ?? ""}`, rg);
      return json(200, subnet);
    });
  }
  return notFound();
}

function scaleSetRoute(
  engine: Engine,
  base: Pick<Route, "statsKey" | "arm" | "subscriptionId" | "compute">,
  method: string,
  sub: string,
  rg: string,
  name: string,
  existingId: string | undefined,
  regionKey: string,
): Route {
  const resourceKey = base.statsKey;
  switch (method) {
    case "GET":
      return {
        ...base,
        kind: "gets",
        policy: { names: ["GetVMScaleSet"], resourceKey, regionKey },
        handle: () => {
          const ss = engine.requireScaleSet(sub, rg, name);
          return json(200, renderScaleSet(ss), { etag: `"${ss.etag}"` });
        },
      };
    case "PUT":
    case "PATCH":
      return {
        ...base,
        kind: method === "PUT" ? "puts" : "patches",
        // CRP's headers name CreateVMScaleSet* on creates and updates alike (recorded); a create has the smaller
        // budget.
        policy: { names: [existingId ? "CreateVMScaleSet" : "NewVMScaleSet"], resourceKey, regionKey },
        ...(existingId ? { writeTarget: existingId } : {}),
        handle: (c) =>
          writeReply(
            engine,
            c,
            engine.writeScaleSet(sub, rg, name, parseBody(c.bodyText), method, writeContext(engine, c)),
          ),
      };
    case "DELETE":
      return {
        ...base,
        kind: "deletes",
        policy: { names: ["DeleteVMScaleSet"], resourceKey, regionKey },
        handle: (c) => {
          const out = engine.deleteScaleSet(sub, rg, name, writeContext(engine, c));
          return out ? writeReply(engine, c, out) : { status: 204, headers: {} };
        },
      };
    default:
      return methodNotAllowed(base, method);
  }
}

function instanceRoute(
  engine: Engine,
  base: Pick<Route, "statsKey" | "arm" | "subscriptionId" | "compute">,
  method: string,
  sub: string,
  rg: string,
  name: string,
  iid: string,
  regionKey: string,
): Route {
  const resourceKey = base.statsKey;
  const existing = engine.resolve(resourceKey)?.inst;
  const numeric =
    (handle: Handler): Handler =>
    (c) => {
      if (!/^\d+$/.test(iid)) throw invalidInstanceId();
      return handle(c);
    };
  switch (method) {
    case "GET":
      return {
        ...base,
        kind: "instanceGets",
        policy: { names: ["GetVMScaleSetVM"], resourceKey, regionKey },
        handle: numeric(() => {
          const ss = engine.requireScaleSet(sub, rg, name);
          const inst = engine.requireInstance(ss, iid);
          return json(200, renderInstance(ss, inst), { etag: `"${inst.etag}"` });
        }),
      };
    case "PUT":
      return {
        ...base,
        kind: "instancePuts",
        policy: { names: ["UpdateVMScaleSetVM"], resourceKey, regionKey },
        ...(existing ? { writeTarget: existing.id } : {}),
        handle: numeric((c) => {
          const ss = engine.requireScaleSet(sub, rg, name);
          return writeReply(engine, c, engine.writeInstance(ss, iid, parseBody(c.bodyText), writeContext(engine, c)));
        }),
      };
    case "DELETE":
      return {
        ...base,
        kind: "instanceDeletes",
        policy: { names: ["DeleteVMScaleSetVM"], resourceKey, regionKey },
        handle: numeric((c) => {
          const ss = engine.requireScaleSet(sub, rg, name);
          return writeReply(engine, c, engine.deleteInstance(ss, iid, writeContext(engine, c)));
        }),
      };
    default:
      return methodNotAllowed(base, method);
  }
}

function methodNotAllowed(base: Pick<Route, "statsKey" | "arm" | "subscriptionId" | "compute">, method: string): Route {
  return {
    ...base,
    kind: undefined,
    handle: () =>
      json(405, {
        error: { code: "MethodNotAllowed", message: `The requested method '${method}' is not allowed here.` },
      }),
  };
}

function writer(c: RequestContext, claimsDefault: Record<string, string>): Writer {
  return {
    clientRequestId: c.clientRequestId,
    correlationId: c.correlationId,
    claims: claimsFromToken(c.token, claimsDefault),
    method: c.method,
    url: c.url.toString(),
    clientIpAddress: c.clientIp,
  };
}

/** The request's preconditions: ignored at an api-version without ETags; an empty If-Match is refused, never read as
 *  "no condition". */
function writeContext(engine: Engine, c: RequestContext): WriteContext {
  const ifMatch = c.etags ? c.headers["if-match"] : undefined;
  const ifNoneMatch = c.etags ? c.headers["if-none-match"] : undefined;
  if (ifMatch !== undefined && ifMatch.trim() === "") throw emptyIfMatch();
  return {
    writer: writer(c, engine.settings.callerClaims),
    resourceUri: decodeURIComponent(c.url.pathname).replace(/\/+$/, ""),
    ...(ifMatch !== undefined ? { ifMatch } : {}),
    ...(ifNoneMatch !== undefined ? { ifNoneMatch } : {}),
  };
}

function operationUrl(
  c: RequestContext,
  op: { subscriptionId: string; location: string; id: string },
  monitor: boolean,
): string {
  const q = `${monitor ? "monitor=true&" : ""}api-version=${encodeURIComponent(c.apiVersion)}`;
  return `${c.base}/subscriptions/${op.subscriptionId}/providers/Microsoft.Compute/locations/${op.location}/operations/${op.id}?p=${op.id}&${q}`;
}

/** A write's answer: the resource (if any), its ETag, and the long-running operation to poll. */
function writeReply(engine: Engine, c: RequestContext, out: WriteOutcome): Reply {
  const headers: Record<string, string> = {
    "azure-asyncoperation": operationUrl(c, out.operation, false),
    "azure-asyncnotification": "Enabled",
    "x-ms-request-charge": String(out.charge),
    ...(out.etag ? { etag: out.etag } : {}),
    ...(out.withLocation ? { location: operationUrl(c, out.operation, true) } : {}),
    "retry-after": String(engine.settings.operationRetryAfterSeconds),
  };
  return { status: out.status, ...(out.body ? { body: out.body } : {}), headers, charge: out.charge };
}

function operationReply(engine: Engine, id: string, c: RequestContext): Reply {
  const op = engine.operations.get(id);
  if (!op)
    return json(404, { error: { code: "NotFound", message: "The entity was not found in this Azure location." } });
  const retryAfter = { "retry-after": String(engine.settings.operationRetryAfterSeconds) };
  if (c.url.searchParams.get("monitor") === "true") {
    // The Location URL: 202 while in progress, then 200, or the status of the error the operation ended with.
    if (op.status === "InProgress") return { status: 202, headers: { ...retryAfter, location: c.url.toString() } };
    if (op.status === "Succeeded") return { status: 200, headers: {} };
    return json(op.status === "Canceled" ? 409 : 500, {
      error: op.error ?? { code: op.status, message: `The operation ended ${op.status}.` },
    });
  }
  return json(200, Operations.body(op), op.status === "InProgress" ? retryAfter : {});
}
