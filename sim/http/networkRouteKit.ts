// What the load balancer and application gateway routes share: a write's context from the request, and NRP's answers
// to writes (Azure-AsyncOperation on its operations resource, a delete's Location on `operationResults`; no ETag
// header, the etag is in the body: recorded) and to polls of `operationResults`.
import type { Engine } from "../engine";
import { claimsFromToken } from "../events";
import type { NetworkWriteContext, NetworkWriteOutcome } from "../networkWrites";
import { nrpOperationUrl } from "../nrpOperations";
import { json, type Reply, type RequestContext } from "./reply";

export function networkWriteContext(engine: Engine, c: RequestContext): NetworkWriteContext {
  const ifMatch = c.headers["if-match"];
  const ifNoneMatch = c.headers["if-none-match"];
  return {
    writer: {
      clientRequestId: c.clientRequestId,
      correlationId: c.correlationId,
      claims: claimsFromToken(c.token, engine.settings.callerClaims),
      method: c.method,
      url: c.url.toString(),
      clientIpAddress: c.clientIp,
    },
    resourceUri: decodeURIComponent(c.url.pathname).replace(/\/+$/, ""),
    apiVersion: c.apiVersion,
    base: c.base,
    ...(ifMatch !== undefined ? { ifMatch } : {}),
    ...(ifNoneMatch !== undefined ? { ifNoneMatch } : {}),
  };
}

export function networkWriteReply(engine: Engine, c: RequestContext, out: NetworkWriteOutcome): Reply {
  return {
    status: out.status,
    ...(out.body ? { body: out.body } : {}),
    headers: {
      "azure-asyncoperation": nrpOperationUrl(c, out.operation),
      "azure-asyncnotification": "Enabled",
      ...(out.withLocation ? { location: nrpOperationUrl(c, out.operation, "operationResults") } : {}),
      "retry-after": String(engine.settings.operationRetryAfterSeconds),
    },
  };
}

/** A delete's Location: 202 while its operation runs, then 204; a failed or canceled one answers its error. */
export function operationResultReply(engine: Engine, id: string, c: RequestContext): Reply {
  const op = engine.operations.get(id);
  if (!op)
    return json(404, { error: { code: "NotFound", message: "The entity was not found in this Azure location." } });
  if (op.status === "InProgress")
    return {
      status: 202,
      headers: { location: c.url.toString(), "retry-after": String(engine.settings.operationRetryAfterSeconds) },
    };
  if (op.status === "Succeeded") return { status: 204, headers: {} };
  return json(op.status === "Canceled" ? 409 : 500, {
    error: op.error ?? { code: op.status, message: `The operation ended ${op.status}.` },
  });
}

export function methodNotAllowed(method: string): Reply {
  return json(405, {
    error: { code: "MethodNotAllowed", message: `The requested method '${method}' is not allowed here.` },
  });
}
