import { checkBinding, type BindingRule } from "../core/bindings";
import { MAX_DECLARED_AHEAD_MS, QUEUE_DECLARER, type Declaration } from "../core/declarations";
import {
  isLeading,
  parseQueueMessage,
  reasonOf,
  targetIdOf,
  traceparentOf,
  type DeclareMessage,
  type QueueMessage,
} from "../core/messages";
import type { Logger } from "../core/ports";
import { parseBackendPoolId, parseTargetId, type TargetRef } from "../core/resourceIds";
import { kindProblem } from "../core/poolKinds";
import { inScopes, type Scope } from "../core/scopes";
import { recordMessageAge } from "../telemetry/metrics";
import { inSpan } from "../telemetry/tracing";
import type { Scheduled } from "./declareWindow";
import type { DeclareAnswer, DeclareRequest } from "./intakeBatch";
import type { ReconcileReport, ReconcileTrigger } from "./vocabulary";

/**
 * The queue trigger's whole job, host-independent: validate, record the intent, then either hand it to the
 * scale set's gathered reconcile (declare window on) or hand it to the reconcile runner. The function file only adapts
 * the host's input.
 */

export interface QueueMessageMeta {
  id: string;
  dequeueCount: number;
  insertionTime: string | undefined;
}

export interface HandleDeps {
  scopes: readonly Scope[];
  bindings?: readonly BindingRule[];
  /** Stores the declaration (batched with others of its target) and schedules its pass. */
  declare(req: DeclareRequest): Promise<DeclareAnswer>;
  /** The declare window is on: a leading pass is marked so (it may stand down for a window opened behind it). */
  windowOn: boolean;
  /** This host is busy with the target or a backlog: nothing it declares leads. */
  busy(ref: TargetRef): boolean;
  log: Logger;
  now: () => number;
  poison(received: unknown, reason: string): Promise<void>;
  /** The reconcile runner (joined with others of the same target, under its lease, its outcome to the queue). */
  reconcile(ref: TargetRef, trigger: ReconcileTrigger): Promise<ReconcileReport>;
}

export type HandleOutcome =
  | { result: "poisoned"; reason: string }
  | { result: "skipped"; reason: string }
  | { result: "reconciled"; report: ReconcileReport }
  /** Handed to the scale set's gathered reconcile: "scheduled" enqueued it, "joined" found it already coming. */
  | { result: "gathered"; scheduled: Exclude<Scheduled, "leading"> };

function declarationOf(m: DeclareMessage, meta: QueueMessageMeta, now: number): Declaration {
  return {
    scaleSetId: targetIdOf(m),
    backendPoolId: m.backendPoolId,
    // Messages of every version carry the IP version as a field of its own (ipVersion): nothing to decode here.
    ipConfiguration: m.ipConfiguration ?? "",
    ...(m.ipVersion ? { ipVersion: m.ipVersion } : {}),
    state: m.state,
    ...(m.adminState !== undefined ? { adminState: m.adminState } : {}),
    ...(m.instances !== undefined ? { adminInstances: m.instances } : {}),
    ...(m.movedTo !== undefined ? { movedTo: m.movedTo } : {}),
    // A redelivery of the same message carries the same id, so it is recognised as the same declaration.
    requestId: m.requestId ?? `queue-${meta.id}`,
    declaredAt: m.declaredAt ?? meta.insertionTime ?? new Date(now).toISOString(),
    declaredBy: QUEUE_DECLARER,
  };
}

export async function handleQueueMessage(
  body: unknown,
  meta: QueueMessageMeta,
  deps: HandleDeps,
): Promise<HandleOutcome> {
  const parsed = parseQueueMessage(body);
  if (!parsed.ok) {
    await deps.poison(body, parsed.reason);
    deps.log.warn("message.poisoned", { messageId: meta.id, reason: parsed.reason });
    return { result: "poisoned", reason: parsed.reason };
  }
  const message = parsed.message;
  if (meta.insertionTime) recordMessageAge(deps.now() - Date.parse(meta.insertionTime), message.kind);
  // The message continues the trace of whoever enqueued it (the declaration's request, the event, the timer).
  const attributes = {
    "poolsync.message.kind": message.kind,
    "poolsync.message.id": meta.id,
    "poolsync.message.dequeue_count": meta.dequeueCount,
    "poolsync.target": targetIdOf(message),
  };
  return inSpan(`poolsync.message ${message.kind}`, { parent: traceparentOf(message), attributes }, () =>
    handleValid(message, body, meta, deps),
  );
}

async function handleValid(
  message: QueueMessage,
  body: unknown,
  meta: QueueMessageMeta,
  deps: HandleDeps,
): Promise<HandleOutcome> {
  const ref = parseTargetId(targetIdOf(message));
  if (!ref.ok) throw new Error("unreachable: the schema validated the target ID");
  const refuse = (reason: string, fields: Record<string, unknown> = {}) => refused(body, meta, deps, reason, fields);
  if (!inScopes(deps.scopes, ref.value.subscriptionId, ref.value.resourceGroup))
    return refuse(`${message.targetId ? "targetId" : "scaleSetId"}: ${ref.value.id} is outside POOLSYNC_SCOPES`);
  if (message.kind !== "declare") {
    const trigger: ReconcileTrigger = {
      reason: reasonOf(message),
      attempt: message.attempt ?? 0,
      ...(message.fresh ? { fresh: true } : {}),
      ...(isLeading(message) ? { leading: true } : {}),
    };
    return { result: "reconciled", report: await deps.reconcile(ref.value, trigger) };
  }
  const problem = declareProblem(message, ref.value, deps);
  if (problem) return refuse(problem);
  const declaration = declarationOf(message, meta, deps.now());
  const reason = `declare ${message.state} ${message.backendPoolId}`;
  const answer = await deps.declare({
    ref: ref.value,
    declaration,
    claimant: `queue-${meta.id}`,
    reason,
    runsLeading: true,
    busy: deps.busy(ref.value),
  });
  const fields = { scaleSetId: ref.value.id, backendPoolId: message.backendPoolId, state: message.state };
  deps.log.info("declaration", { messageId: meta.id, ...fields, result: answer.result });
  if (answer.result === "refused") return refuse(`${answer.reason} (cap: ${answer.cap})`, fields);
  if (answer.result === "older")
    return { result: "skipped", reason: "a newer declaration for this pool and ip configuration is stored" };
  if (answer.result === "unchanged" && answer.stored.outcome.kind === "applied")
    return { result: "skipped", reason: "already applied (duplicate delivery)" };
  if (answer.scheduled !== "leading") return { result: "gathered", scheduled: answer.scheduled ?? "joined" };
  // A quiet target's first declaration is reconciled here and now, without the coalescer's gather: what comes after
  // it opens a window, whose pass (under the lease, after this one) writes the rest.
  const trigger = deps.windowOn ? { reason, attempt: 0, leading: true, claimedAt: deps.now() } : { reason, attempt: 0 };
  return { result: "reconciled", report: await deps.reconcile(ref.value, trigger) };
}

/** Why a declare message is refused before anything is stored (its pool's scope, kind, binding, time), or undefined. */
function declareProblem(message: DeclareMessage, target: TargetRef, deps: HandleDeps): string | undefined {
  const pool = parseBackendPoolId(message.backendPoolId);
  if (!pool.ok) return futureProblem(message, deps.now());
  if (!inScopes(deps.scopes, pool.value.subscriptionId, pool.value.resourceGroup))
    return `backendPoolId: ${pool.value.id} is outside POOLSYNC_SCOPES`;
  const kinds = kindProblem({
    target,
    poolKind: pool.value.poolKind,
    state: message.state,
    adminState: message.adminState,
    adminInstances: message.instances,
    movedTo: message.movedTo,
  });
  if (kinds) return `${kinds.field}: ${kinds.reason}`;
  const binding = checkBinding(deps.bindings ?? [], target.id, pool.value.id);
  if (!binding.allowed) return `backendPoolId: ${binding.reason}`;
  return futureProblem(message, deps.now());
}

function futureProblem(message: DeclareMessage, now: number): string | undefined {
  if (message.declaredAt === undefined || Date.parse(message.declaredAt) <= now + MAX_DECLARED_AHEAD_MS)
    return undefined;
  return `declaredAt: ${message.declaredAt} is more than ${MAX_DECLARED_AHEAD_MS / 60_000} minutes in the future (it would outrank every later declaration)`;
}

/** A valid message poolsync will not act on: to the poison queue with the reason, and said so in the log. */
async function refused(
  body: unknown,
  meta: QueueMessageMeta,
  deps: Pick<HandleDeps, "poison" | "log">,
  reason: string,
  fields: Record<string, unknown>,
): Promise<HandleOutcome> {
  await deps.poison(body, reason);
  deps.log.warn("message.refused", { messageId: meta.id, ...fields, reason });
  return { result: "poisoned", reason };
}
