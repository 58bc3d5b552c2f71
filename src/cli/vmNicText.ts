import type { ScaleSetView } from "../intake/observedState";
import type { MembershipWithDrift } from "../intake/driftView";

/**
 * A VM target's or a Flexible scale set's NICs in a terminal: per NIC and ip configuration the pools on it, ours
 * marked, with the stale and drift marks the status page shows; the NIC's full ID on its own line, to copy.
 */

const last = (id: string) => id.split("/").filter(Boolean).pop() ?? id;

export function vmNicLines(v: ScaleSetView): string[] {
  if (!v.vms) return [];
  if (v.vms.length === 0) return ["  NICs: no VM cached yet"];
  const drifts = v.memberships.flatMap((m) => {
    const d = (m as Partial<MembershipWithDrift>).drift;
    return d ? [d] : [];
  });
  const lines = [
    `  NICs (${v.vms.length} VM${v.vms.length === 1 ? "" : "s"}${v.vmsTruncated ? ", more not shown" : ""}):`,
  ];
  for (const vm of v.vms) {
    lines.push(`    VM ${last(vm.vmId)}${vm.stale ? ` (re-read next: ${vm.staleReason ?? "marked"})` : ""}`);
    for (const nic of vm.nics) {
      const marks = [
        nic.primary ? "primary" : "",
        nic.stale ? `re-read next: ${nic.staleReason ?? "marked"}` : "",
        ...drifts
          .filter((d) => d.resourceId.toLowerCase() === nic.nicId.toLowerCase())
          .map((d) => `drift by ${d.by.name}${d.repairedAt ? `, repaired ${d.repairedAt}` : ", not repaired"}`),
      ].filter(Boolean);
      lines.push(
        `      NIC ${nic.name}${marks.length ? ` (${marks.join("; ")})` : ""}${nic.etag ? `  ETag ${nic.etag}` : ""}`,
      );
      lines.push(`        ${nic.nicId}`);
      if (nic.note) lines.push(`        ${nic.note}`);
      for (const c of nic.ipConfigurations) {
        const pools = c.backendPools.map((p) => `${last(p.id)}${p.declared ? "" : " (not declared here)"}`);
        lines.push(`        ${c.name}: ${pools.length ? pools.join(", ") : "no pool"}`);
      }
    }
  }
  return lines;
}
