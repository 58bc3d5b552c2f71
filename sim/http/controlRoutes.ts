// The control API over HTTP, under /_sim/, for other processes (the local runtime, benchmarks, curl). Bodies are
// JSON; a change another writer makes is given as a merge patch (`merge`), applied with CRP's merge rules.
import type { SimControl } from "../control";
import { ArmError } from "../errors";
import type { FaultRule } from "../faults";
import { isJsonObject, parseArmJson, type Json, type JsonObject } from "../json";
import { mergeArm } from "../merge";
import type { SeedSpec } from "../seed";
import { fromArmError, json, type Reply } from "./reply";

function mergeMutation(patch: JsonObject) {
  return (r: JsonObject): void => {
    const merged = mergeArm(r, patch);
    for (const k of Object.keys(r)) delete r[k];
    Object.assign(r, merged);
  };
}

function str(body: JsonObject, key: string): string {
  const v = body[key];
  if (typeof v !== "string") throw new Error(`"${key}" (string) is required`);
  return v;
}

function pattern(body: JsonObject): string | RegExp {
  return typeof body["pattern"] === "string" ? new RegExp(body["pattern"], "i") : str(body, "id");
}

export function handleControl(control: SimControl, method: string, url: URL, bodyText: string): Reply {
  const route = `${method} ${url.pathname.replace(/\/+$/, "").toLowerCase()}`;
  try {
    const parsed: Json = bodyText.trim() ? parseArmJson(bodyText) : {};
    const body: JsonObject = isJsonObject(parsed) ? parsed : { value: parsed };
    switch (route) {
      case "GET /_sim/health":
        return json(200, { ok: true });
      case "POST /_sim/seed":
        control.seed(body["value"] === "demo" || body["demo"] === true ? "demo" : (body as unknown as SeedSpec));
        return json(200, { ok: true });
      case "POST /_sim/reset": {
        const seed = body["seed"];
        control.reset(
          seed === "demo" ? { seed: "demo" } : isJsonObject(seed) ? { seed: seed as unknown as SeedSpec } : undefined,
        );
        return json(200, { ok: true });
      }
      case "GET /_sim/resource": {
        const r = control.resource(url.searchParams.get("id") ?? "");
        return r ? json(200, r) : json(404, { error: "not found" });
      }
      case "GET /_sim/instances":
        return json(200, { value: control.instances(url.searchParams.get("id") ?? "") });
      case "GET /_sim/pool-members":
        return json(200, { value: control.poolMembers(url.searchParams.get("id") ?? "") });
      case "GET /_sim/pool-state": {
        const state = control.poolState(url.searchParams.get("id") ?? "");
        return state ? json(200, state as unknown as JsonObject) : json(404, { error: "not found" });
      }
      case "POST /_sim/pool-addresses":
        return json(200, writePoolAddresses(control, body) as unknown as JsonObject);
      case "POST /_sim/write": {
        const patch = body["merge"];
        if (!isJsonObject(patch)) throw new Error(`"merge" (object) is required`);
        const crid = body["clientRequestId"];
        return json(
          200,
          control.write(
            str(body, "id"),
            mergeMutation(patch),
            typeof crid === "string" ? { clientRequestId: crid } : undefined,
          ),
        );
      }
      case "POST /_sim/interleave": {
        const patch = body["merge"];
        if (!isJsonObject(patch)) throw new Error(`"merge" (object) is required`);
        const times = typeof body["times"] === "number" ? body["times"] : body["times"] === "always" ? Infinity : 1;
        control.beforeNextWrite(pattern(body), mergeMutation(patch), { times });
        return json(200, { ok: true });
      }
      case "POST /_sim/faults": {
        const rule = body as unknown as FaultRule;
        if (typeof rule.path !== "string") throw new Error(`"path" (regular expression) is required`);
        if (body["times"] === "always") rule.times = Infinity;
        control.injectFault(rule);
        return json(200, { ok: true });
      }
      case "DELETE /_sim/faults":
        control.clearFaults();
        return json(200, { ok: true });
      case "GET /_sim/operations":
        return json(200, { value: control.operations().map((o) => ({ ...o })) as unknown as Json });
      case "POST /_sim/operations/fail":
        return json(200, {
          failed: control.failOperation(str(body, "id"), isJsonObject(body["error"]) ? body["error"] : undefined),
        });
      case "POST /_sim/operations/fail-next":
        control.failNextOperation(pattern(body), {
          ...(isJsonObject(body["error"]) ? { error: body["error"] } : {}),
          ...(typeof body["times"] === "number" ? { times: body["times"] } : {}),
        });
        return json(200, { ok: true });
      case "POST /_sim/scale": {
        const capacity = body["capacity"];
        if (typeof capacity !== "number") throw new Error(`"capacity" (number) is required`);
        return json(200, control.scale(str(body, "id"), capacity));
      }
      case "POST /_sim/delete":
        control.delete(str(body, "id"));
        return json(200, { ok: true });
      case "GET /_sim/stats": {
        const id = url.searchParams.get("id");
        return json(200, { ...control.stats(id ?? undefined) });
      }
      case "POST /_sim/stats/reset":
        control.resetStats();
        return json(200, { ok: true });
      case "GET /_sim/events": {
        const since = Number(url.searchParams.get("since") ?? "0") || 0;
        const schema = url.searchParams.get("schema") ?? control.eventSchema;
        const all = /^cloud/i.test(schema) ? control.cloudEvents() : control.events();
        return json(200, { value: all.slice(since) as unknown as Json, next: all.length });
      }
      case "GET /_sim/clock":
        return json(200, {
          now: control.clock.now(),
          nowIso: control.clock.nowIso(),
          timeScale: control.clock.timeScale,
        });
      case "POST /_sim/clock/advance": {
        const ms = body["ms"];
        if (typeof ms !== "number") throw new Error(`"ms" (number) is required`);
        control.clock.advance(ms);
        return json(200, { now: control.clock.now(), nowIso: control.clock.nowIso() });
      }
      case "POST /_sim/settle":
        control.settle();
        return json(200, { now: control.clock.now() });
      default:
        return json(404, { error: `no control endpoint ${route}` });
    }
  } catch (e) {
    // Another writer refused as the API would refuse it (409 while an operation runs, 412, 400): the same answer.
    if (e instanceof ArmError) return fromArmError(e);
    return json(400, { error: (e as Error).message });
  }
}

/** `{id, add?, remove?, adminState?, ifMatch?, clientRequestId?}`: another writer's address change. */
function writePoolAddresses(control: SimControl, body: JsonObject) {
  const list = (key: string) => (Array.isArray(body[key]) ? (body[key] as Json[]) : undefined);
  const add = list("add");
  const remove = list("remove");
  const admin = body["adminState"];
  return control.writePoolAddresses(
    str(body, "id"),
    {
      ...(add ? { add: add.filter(isJsonObject) } : {}),
      ...(remove ? { remove: remove.filter((r): r is string => typeof r === "string") } : {}),
      ...(isJsonObject(admin)
        ? { adminState: Object.fromEntries(Object.entries(admin).map(([k, v]) => [k, String(v)])) }
        : {}),
    },
    {
      ...(typeof body["ifMatch"] === "string" ? { ifMatch: body["ifMatch"] } : {}),
      ...(typeof body["clientRequestId"] === "string" ? { clientRequestId: body["clientRequestId"] } : {}),
    },
  );
}
