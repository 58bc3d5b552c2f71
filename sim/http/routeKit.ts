// What the route modules share: the route a request resolves to, a request body parsed as ARM does, and list pages.
import type { Engine } from "../engine";
import { invalidJson } from "../errors";
import { isJsonObject, parseArmJson, type Json, type JsonObject } from "../json";
import type { RequestKind } from "../stats";
import type { ComputePolicy } from "../throttle";
import { json, type Reply, type RequestContext } from "./reply";

export interface Route {
  kind: RequestKind | undefined;
  /** Canonical ID the request is counted under. */
  statsKey: string;
  /** CRP throttling policies, with the resource and subscription+region they charge. */
  policy?: { names: ComputePolicy[]; resourceKey: string; regionKey: string };
  /** A Compute route: its api-version must be one CRP registers, and decides whether ETags exist. */
  compute?: boolean;
  arm: "reads" | "writes" | "deletes";
  subscriptionId?: string;
  /** A PUT/PATCH to this existing resource: the interleaved writer acts before it. */
  writeTarget?: string;
  handle: (ctx: RequestContext) => Reply;
}

export function parseBody(text: string): JsonObject {
  let parsed: Json;
  try {
    parsed = parseArmJson(text);
  } catch (e) {
    throw invalidJson((e as Error).message);
  }
  if (!isJsonObject(parsed)) throw invalidJson("the body must be a JSON object");
  return parsed;
}

/** A page of a list, with a nextLink when more follow. */
export function page(engine: Engine, c: RequestContext, items: JsonObject[]): Reply {
  const size = engine.settings.listPageSize;
  const skip = Number(c.url.searchParams.get("$skiptoken") ?? "0") || 0;
  const value = items.slice(skip, skip + size);
  const body: JsonObject = { value };
  const views = value.length;
  if (skip + size < items.length) {
    const next = new URL(`${c.base}${c.url.pathname}`);
    next.searchParams.set("api-version", c.apiVersion);
    next.searchParams.set("$skiptoken", String(skip + size));
    body["nextLink"] = next.toString();
  }
  return { ...json(200, body), views };
}
