import { z } from "zod";
import { parseBackendPoolId, parseScaleSetId, parseTargetId } from "./resourceIds";
import { ADMIN_STATES } from "./poolKinds";

/**
 * Queue messages, schema v1 (documented in the README). The queue only says "look at this scale set";
 * a `declare` also carries the intent, which is written to the memberships table before anything else.
 */

const scaleSetId = z.string().superRefine((v, ctx) => {
  const r = parseScaleSetId(v);
  if (!r.ok) ctx.addIssue({ code: "custom", message: r.reason });
});

// A scale set (Uniform or Flexible) or a top-level VM; `scaleSetId` stays the field for scale sets.
const targetId = z.string().superRefine((v, ctx) => {
  const r = parseTargetId(v);
  if (!r.ok) ctx.addIssue({ code: "custom", message: r.reason });
});

/** Exactly one of scaleSetId and targetId names what a message is about. */
function oneTarget(m: { scaleSetId?: string | undefined; targetId?: string | undefined }, ctx: z.RefinementCtx): void {
  if (m.scaleSetId === undefined && m.targetId === undefined)
    ctx.addIssue({ code: "custom", path: ["targetId"], message: "is required (or scaleSetId)" });
  if (m.scaleSetId !== undefined && m.targetId !== undefined)
    ctx.addIssue({ code: "custom", path: ["targetId"], message: "give targetId or scaleSetId, not both" });
}

const backendPoolId = z.string().superRefine((v, ctx) => {
  const r = parseBackendPoolId(v);
  if (!r.ok) ctx.addIssue({ code: "custom", message: r.reason });
});

// Names of NICs and ip configurations: letters, digits, _ . - (CRP's rules); "nic/ipconfig" picks a NIC.
const ipConfiguration = z
  .string()
  .regex(
    /^(?:[A-Za-z0-9_.-]{1,80}\/)?[A-Za-z0-9_.-]{1,80}$/,
    'must be an ip configuration name, or "nicConfiguration/ipConfiguration"',
  );

/**
 * W3C trace context of whoever asked (the declaration's HTTP request, the event): the reconcile continues that trace.
 * Optional and read by this version; see LEGACY_TRACE_MARK for what is written while hosts of the previous version run.
 */
export const TRACEPARENT_PATTERN = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;
const traceparent = z.string().regex(TRACEPARENT_PATTERN, "must be a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)");

/** The members an admin state applies to: Uniform instance IDs or VM names, each once. */
export const adminInstancesSchema = z
  .array(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "must be an instance ID or a VM name"), {
    error: "must be an array of instance IDs or VM names",
  })
  .min(1, "must name at least one instance")
  .max(1_000, "names more than 1,000 instances")
  .refine((a) => new Set(a.map((i) => i.toLowerCase())).size === a.length, "names an instance twice");

const requestId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_.:-]+$/, "may hold only letters, digits and _ . : -");

export const declareMessageV1 = z
  .strictObject({
    v: z.literal(1),
    kind: z.literal("declare"),
    scaleSetId: scaleSetId.optional(),
    targetId: targetId.optional(),
    backendPoolId,
    ipConfiguration: ipConfiguration.optional(),
    /** Dual stack: the primary NIC's ip configuration of this IP version, instead of naming one. */
    ipVersion: z.enum(["IPv4", "IPv6"], { error: 'must be "IPv4" or "IPv6"' }).optional(),
    state: z.enum(["present", "absent"], {
      error: (iss) => (iss.input === undefined ? "is required" : 'must be "present" or "absent"'),
    }),
    requestId: requestId.optional(),
    /** When the user declared it (ISO 8601); orders declarations that arrive out of order. */
    declaredAt: z.iso.datetime({ offset: true }).optional(),
    traceparent: traceparent.optional(),
    /** Issue 43: the members' admin state in an IP-based pool, and which members it applies to. */
    adminState: z.enum(ADMIN_STATES, { error: `must be one of ${ADMIN_STATES.join(", ")}` }).optional(),
    instances: adminInstancesSchema.optional(),
    /** Issue 43: this absent is half of a move to that pool (see Declaration.movedTo). */
    movedTo: backendPoolId.optional(),
  })
  .superRefine((m, ctx) => {
    oneTarget(m, ctx);
    if (m.ipVersion !== undefined && m.ipConfiguration !== undefined) {
      ctx.addIssue({ code: "custom", path: ["ipVersion"], message: "give ipVersion or ipConfiguration, not both" });
    }
  });

export const reconcileMessageV1 = z
  .strictObject({
    v: z.literal(1),
    kind: z.literal("reconcile"),
    scaleSetId: scaleSetId.optional(),
    targetId: targetId.optional(),
    reason: z.string().min(1).max(256),
    /** How many times this reconcile was re-enqueued after a throttle, conflict or transient failure. */
    attempt: z.number().int().min(1).max(1000).optional(),
    /** Read ARM, not the cache (the timer saw ARM differ from what is declared). */
    fresh: z.boolean().optional(),
    /** A quiet target's first declaration: its reconcile stands down for a declare window opened behind it. */
    leading: z.boolean().optional(),
    traceparent: traceparent.optional(),
  })
  .superRefine(oneTarget);

/**
 * How the previous version marked a leading reconcile: a prefix on its free-text reason. Both are read (see
 * `isLeading`); the prefix is still what this version writes, because the previous version's strict schema poisons a
 * message with a field it does not know. Once no host of the previous version is left, write `leading: true` instead.
 */
export const LEGACY_LEADING_PREFIX = "leading: ";

/** A leading reconcile, as this version or the previous one wrote it. */
export const isLeading = (m: ReconcileMessage) => m.leading === true || m.reason.startsWith(LEGACY_LEADING_PREFIX);

/** The reason without the previous version's leading prefix. */
export const reasonOf = (m: ReconcileMessage) => {
  const reason = m.reason.replace(TRACE_SUFFIX, "");
  return reason.startsWith(LEGACY_LEADING_PREFIX) ? reason.slice(LEGACY_LEADING_PREFIX.length) || reason : reason;
};

/**
 * How this version carries a reconcile's trace context while hosts of the previous version may still read the queue:
 * a suffix on the free-text reason, which their strict schema accepts (a `traceparent` field would be poisoned by
 * them, at once and without retry). Both are read (`traceparentOf`); once no host of the previous version is left,
 * write the field instead, as with LEGACY_LEADING_PREFIX.
 */
export const LEGACY_TRACE_MARK = " [traceparent ";
const TRACE_SUFFIX = /\s\[traceparent (00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2})\]$/;

/** The reason with the trace suffix, still within the reason's 256 characters (the reason is cut, never the trace). */
export function reasonWithTrace(reason: string, traceparent: string | undefined): string {
  if (!traceparent || !TRACEPARENT_PATTERN.test(traceparent)) return reason.slice(0, 256);
  const suffix = `${LEGACY_TRACE_MARK}${traceparent}]`;
  return `${reason.slice(0, 256 - suffix.length)}${suffix}`;
}

/** A message's trace context: the field, else the previous version's reason suffix. */
export function traceparentOf(m: QueueMessage): string | undefined {
  if (m.traceparent) return m.traceparent;
  if (m.kind !== "reconcile") return undefined;
  const found = TRACE_SUFFIX.exec(m.reason)?.[1];
  return found && TRACEPARENT_PATTERN.test(found) ? found : undefined;
}

export const queueMessageV1 = z.discriminatedUnion("kind", [declareMessageV1, reconcileMessageV1]);

export type DeclareMessage = z.infer<typeof declareMessageV1>;
export type ReconcileMessage = z.infer<typeof reconcileMessageV1>;
export type QueueMessage = z.infer<typeof queueMessageV1>;

/** The ID a message is about, whichever field named it. */
export const targetIdOf = (m: QueueMessage): string => (m.targetId ?? m.scaleSetId) as string;

/** The field a producer names a target with: `scaleSetId` for scale sets (as schema v1 always had), else `targetId`. */
export function targetField(id: string): { scaleSetId: string } | { targetId: string } {
  return /\/virtualMachineScaleSets\/[^/]+$/i.test(id) ? { scaleSetId: id } : { targetId: id };
}

/** Queue messages are at most 64 KiB; ours are far smaller, so anything bigger is refused unread. */
export const MAX_MESSAGE_CHARS = 16 * 1024;

export type ParsedMessage = { ok: true; message: QueueMessage } | { ok: false; reason: string };

/** Accepts what the queue trigger hands over (an object when the body was JSON, else a string). */
export function parseQueueMessage(body: unknown): ParsedMessage {
  let value = body;
  // The host hands bytes over when the base64-decoded body is not UTF-8 text.
  if (body instanceof Uint8Array)
    return {
      ok: false,
      reason: `message is ${body.length} bytes that are not UTF-8 text (expected base64 of a JSON object)`,
    };
  if (typeof body === "string") {
    if (body.length > MAX_MESSAGE_CHARS)
      return { ok: false, reason: `message is ${body.length} characters, over ${MAX_MESSAGE_CHARS}` };
    try {
      value = JSON.parse(body);
    } catch {
      return { ok: false, reason: "message is not JSON" };
    }
  } else if (JSON.stringify(body ?? null).length > MAX_MESSAGE_CHARS) {
    return { ok: false, reason: `message is over ${MAX_MESSAGE_CHARS} characters` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { ok: false, reason: "message is not a JSON object" };
  const v = (value as Record<string, unknown>).v;
  if (v === undefined) return { ok: false, reason: "v: is required (this poolsync reads 1)" };
  if (v !== 1) return { ok: false, reason: `v: unknown schema version ${JSON.stringify(v)} (this poolsync reads 1)` };
  const kind = (value as Record<string, unknown>).kind;
  if (kind === undefined) return { ok: false, reason: "kind: is required (declare or reconcile)" };
  if (kind !== "declare" && kind !== "reconcile")
    return { ok: false, reason: `kind: unknown message kind ${JSON.stringify(kind)} (declare or reconcile)` };
  const parsed = queueMessageV1.safeParse(value);
  if (!parsed.success) return { ok: false, reason: formatIssues(parsed.error) };
  return { ok: true, message: parsed.data };
}

/** "field: reason; field: reason" — the form every refusal takes, on the queue and over HTTP. */
export function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const path = i.path.join(".") || "(message)";
      if (i.code === "unrecognized_keys") return `${i.keys.join(", ")}: unknown field${i.keys.length > 1 ? "s" : ""}`;
      return `${path}: ${i.message}`;
    })
    .join("; ");
}
