// Long-running operations: each write starts one, named by the Azure-AsyncOperation URL. It is InProgress until its
// duration (simulated) has passed, then Succeeded — or Failed, when a test says so.
import { randomUUID } from "node:crypto";
import type { SimClock } from "./clock";
import type { JsonObject } from "./json";

export type OperationStatus = "InProgress" | "Succeeded" | "Failed" | "Canceled";

export interface Operation {
  id: string;
  subscriptionId: string;
  location: string;
  /** The resource the operation writes (scale set or instance), as created. */
  resourceId: string;
  startTime: string;
  endsAt: number;
  endTime?: string;
  status: OperationStatus;
  error?: JsonObject;
  /** Set by a test: end Failed with this error. */
  failWith?: JsonObject;
}

export const DEFAULT_OPERATION_ERROR: JsonObject = {
  code: "InternalExecutionError",
  message: "An internal execution error occurred. Please retry later.",
};

interface FailRule {
  matches: (resourceId: string) => boolean;
  error: JsonObject;
  left: number;
}

export class Operations {
  private readonly ops = new Map<string, Operation>();
  private readonly onEnds = new Map<string, (op: Operation) => void>();
  private failRules: FailRule[] = [];

  constructor(private readonly clock: SimClock) {}

  /** Starts an operation; `onEnd` runs once when it ends, with its final status. */
  start(
    args: { subscriptionId: string; location: string; resourceId: string; durationMs: number },
    onEnd: (op: Operation) => void,
  ): Operation {
    const rule = this.failRules.find((r) => r.left > 0 && r.matches(args.resourceId));
    if (rule) {
      rule.left--;
      this.failRules = this.failRules.filter((r) => r.left > 0);
    }
    const op: Operation = {
      id: randomUUID(),
      subscriptionId: args.subscriptionId,
      location: args.location,
      resourceId: args.resourceId,
      startTime: this.clock.nowIso(),
      endsAt: this.clock.now() + Math.max(0, args.durationMs),
      status: "InProgress",
      ...(rule ? { failWith: rule.error } : {}),
    };
    this.ops.set(op.id, op);
    this.onEnds.set(op.id, onEnd);
    this.clock.at(op.endsAt, () => {
      if (op.status !== "InProgress") return;
      this.end(op, op.failWith ? "Failed" : "Succeeded", op.failWith);
    });
    return op;
  }

  /** Ends an operation in progress now: Canceled (preempted by a newer write) or as its timer would. */
  end(op: Operation, status: Exclude<OperationStatus, "InProgress">, error?: JsonObject): void {
    if (op.status !== "InProgress") return;
    op.status = status;
    if (error) op.error = error;
    op.endTime = this.clock.nowIso();
    const onEnd = this.onEnds.get(op.id);
    this.onEnds.delete(op.id);
    onEnd?.(op);
  }

  get(id: string): Operation | undefined {
    return (
      this.ops.get(id.toLowerCase()) ?? [...this.ops.values()].find((o) => o.id.toLowerCase() === id.toLowerCase())
    );
  }

  all(): Operation[] {
    return [...this.ops.values()];
  }

  /** Makes an operation (by its ID, or the one in progress on a resource) end Failed. False if none is in progress. */
  fail(operationOrResourceId: string, error: JsonObject = DEFAULT_OPERATION_ERROR): boolean {
    const key = operationOrResourceId.toLowerCase();
    const op =
      this.get(operationOrResourceId) ??
      [...this.ops.values()].reverse().find((o) => o.status === "InProgress" && o.resourceId.toLowerCase() === key);
    if (!op || op.status !== "InProgress") return false;
    op.failWith = error;
    return true;
  }

  /** The next `times` operations on resources matching end Failed. */
  failNext(idOrPattern: string | RegExp, error: JsonObject = DEFAULT_OPERATION_ERROR, times = 1): void {
    const matches =
      typeof idOrPattern === "string"
        ? (id: string) => id.toLowerCase() === idOrPattern.toLowerCase()
        : (id: string) => idOrPattern.test(id);
    this.failRules.push({ matches, error, left: times });
  }

  clear(): void {
    this.ops.clear();
    this.onEnds.clear();
    this.failRules = [];
  }

  /** The operation resource's body, as the Azure-AsyncOperation URL answers it. */
  static body(op: Operation): JsonObject {
    return {
      startTime: op.startTime,
      ...(op.endTime ? { endTime: op.endTime } : {}),
      status: op.status,
      ...(op.error ? { error: op.error } : {}),
      name: op.id,
    };
  }
}
