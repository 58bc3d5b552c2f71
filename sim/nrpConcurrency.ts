// NRP's rules for writes that meet a running operation on the same load balancer or application gateway: 409
// `AnotherOperationInProgress` with the running operation's URL (the text microsoft/AzureTRE issue 2222 shows), or,
// with `supersedeRunningNetworkWrite`, the running one ends `Canceled` /
// `CanceledAndSupersededDueToAnotherOperation` (terraform-provider-azurerm issue 10178). A load balancer PUT always
// supersedes a pool PUT in flight: "by design" (Azure/azure-cli issue 21156; the text in aztfmod/terraform-azurerm-caf
// issue 389).
import { ArmError } from "./errors";
import type { JsonObject } from "./json";
import type { Operation, Operations } from "./operations";

/** NRP's names for the operations, as its cancel messages spell them. */
export type NrpOperationName =
  | "PutLoadBalancerOperation"
  | "PutLoadBalancerBackendAddressPoolOperation"
  | "DeleteLoadBalancerBackendAddressPoolOperation"
  | "PutApplicationGatewayOperation";

interface Running {
  op: Operation;
  name: NrpOperationName;
  /** A write to a child resource (a pool) rather than the parent itself. */
  child: boolean;
}

/** Running writes per parent resource (canonical ID), per simulator (its Operations; a reset empties them). */
const registry = new WeakMap<Operations, Map<string, Running[]>>();

function live(ops: Operations, key: string): Running[] {
  let byKey = registry.get(ops);
  if (!byKey) {
    byKey = new Map();
    registry.set(ops, byKey);
  }
  const running = (byKey.get(key) ?? []).filter((r) => r.op.status === "InProgress" && ops.get(r.op.id) === r.op);
  byKey.set(key, running);
  return running;
}

export function anotherOperationInProgress(op: Operation, base: string, apiVersion: string): ArmError {
  return new ArmError(409, {
    error: {
      code: "AnotherOperationInProgress",
      message: `Another operation on this or dependent resource is in progress. To retrieve status of the operation use uri: ${base}/subscriptions/${op.subscriptionId}/providers/Microsoft.Network/locations/${op.location}/operations/${op.id}?api-version=${apiVersion}.`,
      details: [],
    },
  });
}

function superseded(old: Running, by: Operation, byName: NrpOperationName): JsonObject {
  return {
    code: "Canceled",
    message: "Operation was canceled.",
    details: [
      {
        code: "CanceledAndSupersededDueToAnotherOperation",
        message: `Operation ${old.name} (${old.op.id}) was canceled and superseded by operation ${byName} (${by.id}).`,
      },
    ],
  };
}

/**
 * Admits a write to the parent `key`: throws the 409 when a running write blocks it. Returns what to call once the
 * write's own operation has started: it cancels the writes this one supersedes and tracks this one.
 */
export function admitNrpWrite(
  ops: Operations,
  key: string,
  incoming: { name: NrpOperationName; child: boolean },
  opts: { supersede: boolean; base: string; apiVersion: string },
): (started: Operation) => void {
  const toCancel: Running[] = [];
  for (const r of live(ops, key)) {
    if ((!incoming.child && r.child) || opts.supersede) toCancel.push(r);
    else throw anotherOperationInProgress(r.op, opts.base, opts.apiVersion);
  }
  return (started) => {
    for (const r of toCancel) ops.end(r.op, "Canceled", superseded(r, started, incoming.name));
    live(ops, key).push({ op: started, ...incoming });
  };
}

/** The writes running on a parent now (for the inspection route). */
export function runningNrpWrites(ops: Operations, key: string): { operationId: string; name: NrpOperationName }[] {
  return live(ops, key).map((r) => ({ operationId: r.op.id, name: r.name }));
}
