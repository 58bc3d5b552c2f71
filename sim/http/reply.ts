// What a handler answers, before the pipeline adds the common ARM headers.
import type { ArmError } from "../errors";
import type { Json } from "../json";

export interface Reply {
  status: number;
  body?: Json;
  headers: Record<string, string>;
  /** 0 when CRP charges nothing (a write that changed nothing); the tokens taken are given back. */
  charge?: number;
  /** Items in a list answer (CRP charges a VM LIST one view per VM). */
  views?: number;
}

export const DROP = Symbol("drop the connection");
export type Answer = Reply | typeof DROP;

export function json(status: number, body: Json, headers: Record<string, string> = {}): Reply {
  return { status, body, headers };
}

export function fromArmError(e: ArmError): Reply {
  return { status: e.status, body: e.body, headers: { ...e.headers } };
}

/** Everything a handler needs to know about the request. */
export interface RequestContext {
  method: string;
  url: URL;
  /** scheme://host the client used: the base of the URLs the simulator hands out (nextLink, Azure-AsyncOperation). */
  base: string;
  headers: Record<string, string | undefined>;
  bodyText: string;
  apiVersion: string;
  /** Answers carry ETags and writes honour If-Match (a Compute api-version from 2023-09-01 on). */
  etags: boolean;
  token: string;
  clientRequestId: string;
  correlationId: string;
  clientIp: string;
}
