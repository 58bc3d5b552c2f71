// NRP's read-only API of a Uniform scale set's instance NICs (the paths sit under Microsoft.Compute, the Network RP
// answers them; `@azure/arm-network` sends api-version 2018-10-01 to these operations):
//   GET .../virtualMachineScaleSets/{ss}/networkInterfaces                                  every instance's NICs
//   GET .../virtualMachineScaleSets/{ss}/virtualMachines/{i}/networkInterfaces[/{nic}]      an instance's NICs
//   GET .../virtualMachines/{i}/networkInterfaces/{nic}/ipConfigurations[/{ipc}]            their ip configurations
import type { Engine } from "../engine";
import { canonical, VMSS_TYPE, type ParsedResourcePath } from "../ids";
import type { JsonObject } from "../json";
import type { InstanceRecord, ScaleSetRecord } from "../state";
import { renderInstanceNics, renderScaleSetNics } from "../vmssNics";
import { json, type Reply, type RequestContext } from "./reply";
import { methodNotAllowed } from "./networkRouteKit";
import { page, type Route } from "./routeKit";

/** NRP's own 404 (as for a missing backend pool: recorded), the path as requested. Its text for these paths is not
 *  recorded. */
const notFound = (c: RequestContext): Reply =>
  json(404, {
    error: { code: "NotFound", message: `Resource ${decodeURIComponent(c.url.pathname)} not found.`, details: [] },
  });

const byName = (items: JsonObject[], name: string | undefined) =>
  items.find((i) => String(i["name"]).toLowerCase() === (name ?? "").toLowerCase());

export function resolveVmssNicRoute(engine: Engine, ctx: RequestContext, p: ParsedResourcePath): Route | undefined {
  const seg = p.providerSegments.map((s) => s.toLowerCase());
  if (p.resourceGroup === undefined || seg[0] !== "microsoft.compute" || seg[1] !== "virtualmachinescalesets")
    return undefined;
  const whole = seg.length === 4 && seg[3] === "networkinterfaces";
  const ofInstance = seg.length >= 6 && seg[3] === "virtualmachines" && seg[5] === "networkinterfaces";
  if (!whole && !(ofInstance && (seg.length <= 7 || (seg[7] === "ipconfigurations" && seg.length <= 9))))
    return undefined;
  const sub = p.subscriptionId;
  const rg = p.resourceGroup;
  const ssId = `/subscriptions/${sub}/resourceGroups/${rg}/providers/${VMSS_TYPE}/${p.providerSegments[2] ?? ""}`;
  const base = { statsKey: canonical(ctx.url.pathname), arm: "reads", subscriptionId: sub } as const;
  if (ctx.method !== "GET") return { ...base, kind: undefined, handle: () => methodNotAllowed(ctx.method) };

  const scaleSet = (): ScaleSetRecord | undefined => {
    engine.requireResourceGroup(sub, rg);
    return engine.state.scaleSets.get(canonical(ssId));
  };
  const instance = (ss: ScaleSetRecord): InstanceRecord | undefined =>
    ss.instances.get((p.providerSegments[4] ?? "").toLowerCase());

  return {
    ...base,
    kind: "networkGets",
    handle: (c) => {
      const ss = scaleSet();
      if (!ss) return notFound(c);
      if (whole) return page(engine, c, renderScaleSetNics(engine.state, ss));
      const inst = instance(ss);
      if (!inst) return notFound(c);
      const nics = renderInstanceNics(engine.state, inst);
      if (seg.length === 6) return page(engine, c, nics);
      const nic = byName(nics, p.providerSegments[6]);
      if (!nic) return notFound(c);
      if (seg.length === 7) return json(200, nic);
      const ipcs = ((nic["properties"] as JsonObject)["ipConfigurations"] ?? []) as JsonObject[];
      if (seg.length === 8) return page(engine, c, ipcs);
      const ipc = byName(ipcs, p.providerSegments[8]);
      return ipc ? json(200, ipc) : notFound(c);
    },
  };
}
