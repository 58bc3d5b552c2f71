// Network RP runs one operation at a time on a resource: a write to a NIC, a load balancer or a pool while another
// write to it (or to a resource it depends on) runs answers 409 AnotherOperationInProgress, naming the running
// operation's URL; a write that references a resource NRP is still updating answers 429 RetryableError
// (ReferencedResourceNotProvisioned). Any NRP resource's writes take and check the lock here (NICs now, load
// balancers, pools and Application Gateways alike), so every writer, the control API's too, meets the same rules.
import { ArmError } from "./errors";
import { canonical } from "./ids";
import type { Operation } from "./operations";

/** The api-version NRP's message names in the operation URL (the one the simulator's own NRP answers carry). */
const MESSAGE_API_VERSION = "2026-01-01";

/** NRP's 409 while an operation runs (Azure/bicep issue 5132, microsoft/AzureTRE issue 2222: `details: []`). */
export function anotherOperationInProgress(op: Operation): ArmError {
  return new ArmError(409, {
    error: {
      code: "AnotherOperationInProgress",
      message: `Another operation on this or dependent resource is in progress. To retrieve status of the operation use uri: https://management.azure.com/subscriptions/${op.subscriptionId}/providers/Microsoft.Network/locations/${op.location}/operations/${op.id}?api-version=${MESSAGE_API_VERSION}.`,
      details: [],
    },
  });
}

/** NRP's 429 for a write that references a resource still updating (hashicorp/terraform issue 7986). */
export function referencedResourceNotProvisioned(referenced: string, by: string, retryAfterSeconds: number): ArmError {
  return new ArmError(
    429,
    {
      error: {
        code: "RetryableError",
        message: "A retryable error occurred.",
        details: [
          {
            code: "ReferencedResourceNotProvisioned",
            message: `Cannot proceed with operation because resource ${referenced} used by resource ${by} is not in Succeeded state. Resource is in Updating state and the last operation that updated/is updating the resource is PutResourceOperation.`,
          },
        ],
      },
    },
    { "retry-after": String(retryAfterSeconds) },
  );
}

/** NRP's 429 for a transient failure: the same code and text, no detail (which detail NRP gives then is not public). */
export function transientRetryableError(retryAfterSeconds: number): ArmError {
  return new ArmError(
    429,
    { error: { code: "RetryableError", message: "A retryable error occurred.", details: [] } },
    { "retry-after": String(retryAfterSeconds) },
  );
}

/** The per-resource operation lock of Network RP. */
export class NrpOperationLocks {
  private readonly held = new Map<string, Operation>();

  /** The operation running on any of these resources, if one does. */
  running(resourceIds: readonly string[]): { id: string; op: Operation } | undefined {
    for (const id of resourceIds) {
      const key = canonical(id);
      const op = this.held.get(key);
      if (op?.status === "InProgress") return { id, op };
      if (op) this.held.delete(key);
    }
    return undefined;
  }

  /** A write to `resourceId`: refused with 409 while an operation runs on it; a reference to a resource that is
   *  being written, with 429. */
  check(resourceId: string, references: readonly string[] = [], retryAfterSeconds = 10): void {
    const own = this.running([resourceId]);
    if (own) throw anotherOperationInProgress(own.op);
    const busy = this.running(references);
    if (busy) throw referencedResourceNotProvisioned(busy.id, resourceId, retryAfterSeconds);
  }

  /** The resource is held until `op` ends. */
  hold(resourceId: string, op: Operation): void {
    this.held.set(canonical(resourceId), op);
  }

  clear(): void {
    this.held.clear();
  }
}
