import type { Accepted } from "../intake/acceptDeclaration";
import type { MembershipView, ScaleSetView } from "../intake/observedState";
import type { PoisonMessage } from "../intake/poisonMessages";
import type { StatusReport } from "../intake/statusReport";
import type { MembershipWithDrift } from "../intake/driftView";
import { driftLine } from "./driftText";
import { vmNicLines } from "./vmNicText";

/** "1 scale set", "2 scale sets". */
const count = (n: number, one: string): string => `${n} ${one}${n === 1 ? "" : "s"}`;

/**
 * Plain text for a terminal: one line per fact, the IDs in full (they are what a person copies into the next command).
 */

const lastSegment = (id: string) => id.split("/").filter(Boolean).pop() ?? id;
const poolName = (id: string) => {
  const seg = id.split("/").filter(Boolean);
  return seg.length >= 10 ? `${seg[7]}/${seg[9]}` : id;
};

export function formatAccepted(a: Accepted): string {
  return [
    `accepted: ${a.state} ${poolName(a.backendPoolId)} on ${lastSegment(a.targetId)} (${a.ipConfiguration ?? (a.ipVersion ? `the ${a.ipVersion} ip configuration` : "primary ip configuration")})`,
    `request id: ${a.requestId}`,
    `declared by: ${a.declaredBy.name} (${a.declaredBy.id}, ${a.declaredBy.via})`,
    a.queued
      ? `queued for reconcile; watch it with: poolsync status ${a.scaleSetId ? `--scale-set ${a.scaleSetId}` : `--target ${a.targetId}`}`
      : "stored, but not queued (queue unavailable): the timer will apply it",
  ].join("\n");
}

/** What `move` answers. */
export function formatMoved(m: {
  targetId: string;
  from: string;
  to: string;
  requestIds: { to: string; from: string };
  declaredBy: { id: string; name: string; via: string };
}): string {
  return [
    `accepted: move ${lastSegment(m.targetId)} from ${poolName(m.from)} to ${poolName(m.to)} (one write per resource)`,
    `request ids: to ${m.requestIds.to}, from ${m.requestIds.from}`,
    `declared by: ${m.declaredBy.name} (${m.declaredBy.id}, ${m.declaredBy.via})`,
    `watch it with: poolsync status --target ${m.targetId}`,
  ].join("\n");
}

const KIND_WORDS: Record<string, string> = {
  loadBalancerBackendPool: "backend pool",
  inboundNatPool: "inbound NAT pool",
  applicationGatewayBackendPool: "gateway pool",
};

/** The kind of pool, its admin state and a move's other half, as one line (empty when there is nothing to say). */
function kindLine(m: MembershipView): string {
  const parts = [
    `${KIND_WORDS[m.poolKind ?? "loadBalancerBackendPool"] ?? m.poolKind}${m.outcome.via === "pool" ? " (IP-based: the pool lists the addresses)" : ""}`,
    ...(m.adminState
      ? [`admin state ${m.adminState}${m.adminInstances ? ` on ${m.adminInstances.join(", ")}` : " on every member"}`]
      : []),
    ...(m.movedTo ? [`moving to ${m.movedTo}`] : []),
  ];
  return `    ${parts.join("; ")}`;
}

function membershipLine(m: MembershipView): string {
  const known = m.instances.filter((i) => i.state !== "unknown");
  const instances =
    m.vms && m.instances.length === 0
      ? `VMs ${m.vms.filter((v) => v.state === m.declared).length}/${m.vms.length} ${m.declared}`
      : m.instances.length === 0
        ? "no instances cached"
        : `instances ${known.filter((i) => i.state === m.declared).length}/${m.instances.length} ${m.declared}`;
  const observed = `${m.model.state}${m.model.stale ? " (stale)" : ""}`;
  const reason = m.outcome.reason ? ` — ${m.outcome.reason}` : "";
  return `  ${poolName(m.backendPoolId)}  ${m.ipConfiguration ?? "primary"}  declared ${m.declared}  observed ${observed}  ${instances}  ${m.sync}  ${m.outcome.kind}${reason}`;
}

export function formatScaleSetView(v: ScaleSetView): string {
  const lines = [`${lastSegment(v.scaleSetId)}  ${v.scaleSetId}`];
  if (!v.cacheEnabled) lines.push("  model: cache disabled, nothing observed");
  else if (v.model.cached)
    lines.push(
      `  model ETag ${v.model.etag} read ${v.model.readAt}${v.model.stale ? ` (re-read next: ${v.model.staleReason ?? "marked"})` : ""}`,
    );
  else lines.push("  model: not cached yet");
  if (v.memberships.length === 0) lines.push("  no declarations");
  for (const m of v.memberships) {
    lines.push(membershipLine(m));
    lines.push(`    pool ${m.backendPoolId}`);
    const kind = kindLine(m);
    if (kind) lines.push(kind);
    lines.push(
      `    declared ${m.declaredAt} by ${m.declaredBy.name} (${m.declaredBy.id}, ${m.declaredBy.via}) (request ${m.requestId}); outcome at ${m.outcome.at}${m.outcome.appliedEtag ? `, applied on ETag ${m.outcome.appliedEtag}` : ""}`,
    );
    const drift = driftLine((m as Partial<MembershipWithDrift>).drift);
    if (drift) lines.push(drift);
    for (const i of m.instances)
      lines.push(
        `    instance ${i.instanceId}: ${i.state}${i.stale ? " (stale)" : ""}${i.etag ? `  ETag ${i.etag}` : ""}${i.note ? `  ${i.note}` : ""}`,
      );
    for (const vm of m.vms ?? [])
      lines.push(
        `    VM ${lastSegment(vm.vmId)}: ${vm.state}${vm.stale ? " (stale)" : ""}${vm.note ? `  ${vm.note}` : ""}`,
      );
  }
  lines.push(...vmNicLines(v));
  const others = v.observedPools.filter((p) => !p.declared);
  if (others.length > 0)
    lines.push(
      `  other pools on it (not declared here): ${others.map((p) => `${poolName(p.backendPoolId)} on ${p.ipConfiguration}`).join(", ")}`,
    );
  return lines.join("\n");
}

export function formatStatus(r: StatusReport): string {
  const outcomes = Object.entries(r.declarations.byOutcome)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`)
    .join(", ");
  const lines = [
    `declarations  ${r.declarations.total}${outcomes ? ` (${outcomes})` : ""}`,
    r.cache.enabled
      ? `cache rows    ${r.cache.rows} (${count(r.cache.scaleSets, "scale set")}, ${count(r.cache.instances, "instance")}; ${r.cache.stale} marked for a re-read, ${r.cache.expired} past the ${r.cache.ttlSeconds} s TTL)`
      : "cache         disabled",
    `queue         ${r.queue.depth} on ${r.queue.name}; ${r.queue.poison} poison on ${r.queue.poisonName}`,
    `412s          ${r.recent.preconditionFailures.length} recorded; throttles ${r.recent.throttles.length} recorded`,
  ];
  for (const v of r.scaleSets) lines.push("", formatScaleSetView(v));
  if (r.scaleSetsTruncated) lines.push("", "(more scale sets than shown; use --scale-set)");
  if (r.queue.poison > 0) lines.push("", "poison messages are waiting: poolsync poison");
  return lines.join("\n");
}

export function formatPoison(queueName: string, messages: PoisonMessage[], total: number): string {
  if (messages.length === 0) return `no poison messages on ${queueName}`;
  const lines = [
    `${total} poison message${total === 1 ? "" : "s"} on ${queueName}${total > messages.length ? ` (showing ${messages.length})` : ""}`,
  ];
  for (const m of messages) {
    lines.push("", `- ${m.insertedOn}  ${m.reason}`);
    if (m.scaleSetId) lines.push(`  scale set: ${m.scaleSetId}`);
    lines.push(`  received: ${m.received.length > 400 ? `${m.received.slice(0, 400)}…` : m.received}`);
  }
  return lines.join("\n");
}
