// Network RP runs one operation at a time on a resource: a write to a NIC, a load balancer (or one of its pools) or an
// application gateway while another write to it runs answers 409 AnotherOperationInProgress, naming the running
// operation's URL; a write that references a resource NRP is still updating answers 429 RetryableError
// (ReferencedResourceNotProvisioned). Every NRP resource's writes take and check the lock here, so every writer, the
// control API's too, meets the same rules. A pool write holds its load balancer (a pool's ETag is its load
// balancer's, and NRP serialises them: microsoft/AzureTRE issue 2222). The one exception NRP makes: a write that
// supersedes the running one cancels it (`CanceledAndSupersededDueToAnotherOperation`): a load balancer PUT always
// supersedes a running pool PUT or DELETE ("by design", Azure/azure-cli issue 21156; the text in
// aztfmod/terraform-azurerm-caf issue 389), and with `supersedeRunningNetworkWrite` any load balancer, pool or gateway
// write supersedes the running one (terraform-provider-azurerm issue 10178).
import { NEWEST_NETWORK_API_VERSION } from "./apiVersions";
import { ArmError } from "./errors";
import { canonical } from "./ids";
import type { JsonObject } from "./json";
import type { Operation, Operations } from "./operations";

/** NRP's names for its write operations, as its cancel messages spell them. */
export type NrpOperationName =
  | "PutNetworkInterfaceOperation"
  | "PutLoadBalancerOperation"
  | "PutLoadBalancerBackendAddressPoolOperation"
  | "DeleteLoadBalancerBackendAddressPoolOperation"
  | "PutApplicationGatewayOperation";

/** Where a write's answer pointed its client (its Azure-AsyncOperation): what NRP's 409 names for it. */
export interface NrpAnnouncement {
  /** scheme://host the client used. */
  base: string;
  apiVersion: string;
}

/** A write that came without a request (the control API's other writer): Azure's host, the newest api-version. */
export const UNANNOUNCED: NrpAnnouncement = {
  base: "https://management.azure.com",
  apiVersion: NEWEST_NETWORK_API_VERSION,
};

/** NRP's operation resource (`operations`: Azure-AsyncOperation) or a delete's result (`operationResults`: Location). */
export function nrpOperationUrl(
  at: NrpAnnouncement,
  op: Operation,
  kind: "operations" | "operationResults" = "operations",
): string {
  return `${at.base}/subscriptions/${op.subscriptionId}/providers/Microsoft.Network/locations/${op.location}/${kind}/${op.id}?api-version=${encodeURIComponent(at.apiVersion)}`;
}

/** NRP's 409 while an operation runs (Azure/bicep issue 5132, microsoft/AzureTRE issue 2222: `details: []`), naming
 *  the running operation's URL as its own answer gave it. */
export function anotherOperationInProgress(op: Operation, at: NrpAnnouncement = UNANNOUNCED): ArmError {
  return new ArmError(409, {
    error: {
      code: "AnotherOperationInProgress",
      message: `Another operation on this or dependent resource is in progress. To retrieve status of the operation use uri: ${nrpOperationUrl(at, op)}.`,
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

/** How a write holds a resource: its operation's name, whether it writes a child of the resource (a pool of the load
 *  balancer held), and where its answer pointed. */
export interface NrpHold {
  name: NrpOperationName;
  child?: boolean;
  at?: NrpAnnouncement;
}

interface Held {
  op: Operation;
  name: NrpOperationName;
  child: boolean;
  at: NrpAnnouncement;
}

function superseded(old: Held, by: Operation, byName: NrpOperationName): JsonObject {
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

/** The per-resource operation lock of Network RP. */
export class NrpOperationLocks {
  private readonly held = new Map<string, Held>();

  /** `operations`: where a superseded write's operation is ended. */
  constructor(private readonly operations: Operations) {}

  private live(id: string): Held | undefined {
    const key = canonical(id);
    const h = this.held.get(key);
    if (h?.op.status === "InProgress") return h;
    if (h) this.held.delete(key);
    return undefined;
  }

  /** The operation running on any of these resources, if one does. */
  running(resourceIds: readonly string[]): { id: string; op: Operation } | undefined {
    for (const id of resourceIds) {
      const h = this.live(id);
      if (h) return { id, op: h.op };
    }
    return undefined;
  }

  /** A write to `resourceId`: refused with 409 while an operation runs on it; a reference to a resource that is
   *  being written, with 429. */
  check(resourceId: string, references: readonly string[] = [], retryAfterSeconds = 10): void {
    const own = this.live(resourceId);
    if (own) throw anotherOperationInProgress(own.op, own.at);
    this.checkReferences(resourceId, references, retryAfterSeconds);
  }

  private checkReferences(resourceId: string, references: readonly string[], retryAfterSeconds: number): void {
    const busy = this.running(references);
    if (busy) throw referencedResourceNotProvisioned(busy.id, resourceId, retryAfterSeconds);
  }

  /**
   * A write to `resourceId` that may supersede the running one: refused as `check` refuses unless it supersedes it
   * (a write to the resource itself over one to a child, or any write with `supersede`). Returns what to call once the
   * write's own operation has started: it cancels the write it superseded and holds the resource for this one.
   */
  admit(
    resourceId: string,
    incoming: NrpHold,
    opts: { supersede?: boolean; references?: readonly string[]; retryAfterSeconds?: number } = {},
  ): (started: Operation) => void {
    const own = this.live(resourceId);
    const cancels = own && (opts.supersede || (!incoming.child && own.child)) ? own : undefined;
    if (own && !cancels) throw anotherOperationInProgress(own.op, own.at);
    this.checkReferences(resourceId, opts.references ?? [], opts.retryAfterSeconds ?? 10);
    return (started) => {
      if (cancels) this.operations.end(cancels.op, "Canceled", superseded(cancels, started, incoming.name));
      this.hold(resourceId, started, incoming);
    };
  }

  /** The resource is held until `op` ends. */
  hold(resourceId: string, op: Operation, how: NrpHold = { name: "PutNetworkInterfaceOperation" }): void {
    this.held.set(canonical(resourceId), {
      op,
      name: how.name,
      child: how.child ?? false,
      at: how.at ?? UNANNOUNCED,
    });
  }

  /** The writes running on a resource now (for the control API's view). */
  writesOn(resourceId: string): { operationId: string; name: NrpOperationName }[] {
    const h = this.live(resourceId);
    return h ? [{ operationId: h.op.id, name: h.name }] : [];
  }

  clear(): void {
    this.held.clear();
  }
}
