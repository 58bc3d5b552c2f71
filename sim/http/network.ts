// Routes for the resources of Flexible scale sets and standalone VMs: NICs (Network RP: GET, full-replacement PUT,
// its own operation resources), VMs (Compute: GET, LIST by resource group and by subscription), and the VMSS VM API
// refused on a Flexible scale set. Anything else falls through to the Compute routes.
import { armError } from "../errors";
import type { Engine } from "../engine";
import { canonical, VM_TYPE, type ParsedResourcePath } from "../ids";
import { resourceNotFound } from "../errors";
import { renderNic } from "../nics";
import { requireNic, writeNic, type NicWriteContext } from "../nicWrites";
import { nrpOperationUrl } from "../nrpOperations";
import { Operations, type Operation } from "../operations";
import { isFlexible, renderVm } from "../vms";
import { json, type Reply, type RequestContext } from "./reply";
import { methodNotAllowed, networkWriteContext } from "./networkRouteKit";
import { page, parseBody, type Route } from "./routeKit";

export function resolveNicAndVmRoute(engine: Engine, ctx: RequestContext, p: ParsedResourcePath): Route | undefined {
  const seg = p.providerSegments.map((s) => s.toLowerCase());
  const sub = p.subscriptionId;
  const method = ctx.method;
  const key = canonical(ctx.url.pathname);
  const arm = method === "GET" ? "reads" : method === "DELETE" ? "deletes" : "writes";
  const base = { statsKey: key, arm, subscriptionId: sub } as const;
  const get = (kind: Route["kind"], handle: Route["handle"]): Route =>
    method === "GET" ? { ...base, kind, handle } : { ...base, kind: undefined, handle: () => methodNotAllowed(method) };

  if (p.resourceGroup === undefined) {
    if (seg[0] === "microsoft.network" && seg[1] === "locations" && seg[3] === "operations" && seg.length === 5) {
      const id = p.providerSegments[4] ?? "";
      const op = engine.operations.get(id);
      return {
        ...get("operationGets", () => operationReply(engine, id)),
        ...(op ? { statsKey: canonical(op.resourceId) } : {}),
      };
    }
    if (seg[0] === "microsoft.compute" && seg[1] === "virtualmachines" && seg.length === 2) {
      return {
        ...get("vmLists", (c) => {
          engine.requireSubscription(sub);
          const all = [...engine.state.vms.values()].filter(
            (v) => v.subscriptionId.toLowerCase() === sub.toLowerCase(),
          );
          return page(
            engine,
            c,
            all.map((v) => renderVm(v, true)),
          );
        }),
        compute: true,
        // A VM LIST is a high-cost read, the bucket the scale set LIST spends.
        policy: { names: ["HighCostGetVMScaleSet"], resourceKey: key, regionKey: `${sub.toLowerCase()}|all` },
      };
    }
    return undefined;
  }
  const rg = p.resourceGroup;
  const regionKey = `${sub.toLowerCase()}|${(engine.state.resourceGroup(sub, rg)?.location ?? "").toLowerCase()}`;
  if (seg[0] === "microsoft.compute" && seg[1] === "virtualmachines") {
    if (seg.length === 2) {
      return {
        ...get("vmLists", (c) => {
          engine.requireResourceGroup(sub, rg);
          const inRg = [...engine.state.vms.values()].filter(
            (v) =>
              v.subscriptionId.toLowerCase() === sub.toLowerCase() &&
              v.resourceGroup.toLowerCase() === rg.toLowerCase(),
          );
          return page(
            engine,
            c,
            inRg.map((v) => renderVm(v, true)),
          );
        }),
        compute: true,
        policy: { names: ["HighCostGetVMScaleSet"], resourceKey: key, regionKey },
      };
    }
    if (seg.length === 3) {
      return {
        ...get("vmGets", () => {
          engine.requireResourceGroup(sub, rg);
          const vm = engine.state.vms.get(key);
          if (!vm) throw resourceNotFound(VM_TYPE, p.providerSegments[2] ?? "", rg);
          return json(200, renderVm(vm), { etag: `"${vm.etag}"` });
        }),
        compute: true,
        policy: { names: ["GetVM"], resourceKey: key, regionKey },
      };
    }
    return undefined;
  }
  if (
    seg[0] === "microsoft.compute" &&
    seg[1] === "virtualmachinescalesets" &&
    seg[3] === "virtualmachines" &&
    seg.length >= 4
  ) {
    const ss = engine.state.scaleSets.get(
      canonical(
        `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.Compute/virtualMachineScaleSets/${p.providerSegments[2] ?? ""}`,
      ),
    );
    if (!ss || !isFlexible(ss.body)) return undefined;
    // CRP's exact text is not public: the code and the reason are what matter.
    return {
      ...base,
      kind: undefined,
      handle: () => {
        throw armError(
          400,
          "OperationNotAllowed",
          `Virtual Machine Scale Set VM APIs are not supported for Virtual Machine Scale Set '${ss.name}' with orchestration mode 'Flexible': its VMs are ${VM_TYPE} resources.`,
        );
      },
    };
  }
  if (seg[0] === "microsoft.network" && seg[1] === "networkinterfaces" && seg.length === 3) {
    const name = p.providerSegments[2] ?? "";
    if (method === "GET") {
      return get("nicGets", () => {
        const nic = requireNic(engine, sub, rg, name);
        return json(200, renderNic(nic), { etag: nic.etag });
      });
    }
    if (method === "PUT") {
      const existing = engine.state.nics.get(key);
      return {
        ...base,
        kind: "nicPuts",
        ...(existing ? { writeTarget: existing.id } : {}),
        handle: (c) => {
          const out = writeNic(engine, sub, rg, name, parseBody(c.bodyText), nicWriteContext(engine, c));
          // Recorded: a synchronous NIC PUT answers no ETag header (the etag is in the body) and no operation.
          return {
            status: out.status,
            body: out.body,
            headers: out.operation ? { etag: out.etag, ...operationHeaders(engine, c, out.operation) } : {},
          };
        },
      };
    }
    return { ...base, kind: undefined, handle: () => methodNotAllowed(method) };
  }
  return undefined;
}

/** A NIC write's context: the network write's, its api-version and base as the announcement another write's 409 names. */
function nicWriteContext(engine: Engine, c: RequestContext): NicWriteContext {
  const { apiVersion, base, ...rest } = networkWriteContext(engine, c);
  return { ...rest, at: { base, apiVersion } };
}

/** NRP answers its writes with an Azure-AsyncOperation on its own operations resource. */
function operationHeaders(engine: Engine, c: RequestContext, op: Operation): Record<string, string> {
  return {
    "azure-asyncoperation": nrpOperationUrl(c, op),
    "azure-asyncnotification": "Enabled",
    "retry-after": String(engine.settings.operationRetryAfterSeconds),
  };
}

function operationReply(engine: Engine, id: string): Reply {
  const op = engine.operations.get(id);
  if (!op)
    return json(404, { error: { code: "NotFound", message: "The entity was not found in this Azure location." } });
  const body = Operations.body(op);
  return json(
    200,
    { status: body["status"] ?? "InProgress", ...(op.error ? { error: op.error } : {}) },
    op.status === "InProgress" ? { "retry-after": String(engine.settings.operationRetryAfterSeconds) } : {},
  );
}
