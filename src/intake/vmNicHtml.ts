import { parseBackendPoolId } from "../core/resourceIds";
import type { DriftAnswer, MembershipWithDrift } from "./driftView";
import { html, type Safe } from "./html";
import type { MembershipView } from "./observedState";
import type { VmNicsView } from "./vmNicState";

/**
 * The NICs of a VM target or of a Flexible scale set's VMs on the status page: one row per ip configuration, the
 * pools on it (ours and anyone else's), with the stale and drift marks a Uniform instance gets. Long resource IDs
 * are shown by their last segments; the full ID is in the title and in a copyable field.
 */

const tail = (id: string, n = 1) => id.split("/").filter(Boolean).slice(-n).join("/");

/** A resource ID a person can read at a glance and still copy whole. */
export function resourceId(id: string, segments = 2): Safe {
  return html`<span class="rid" title="${id}">…/${tail(id, segments)}</span
    ><input class="copy" readonly value="${id}" aria-label="full ID of ${tail(id)}" />`;
}

function poolChip(p: { id: string; declared: boolean }): Safe {
  const ref = parseBackendPoolId(p.id);
  const label = ref.ok ? `${ref.value.parent} / ${ref.value.name}` : tail(p.id);
  return html`<span class="chip ${p.declared ? "ok" : "idle"}" title="${p.id}"
    >${label}${p.declared ? "" : " (not declared here)"}</span
  >`;
}

function driftMark(d: DriftAnswer): Safe {
  return html`<span class="chip ${d.repairedAt ? "warn" : "bad"}" title="${d.at} · ${d.operation}"
    >drift by ${d.by.name}${d.repairedAt ? " · repaired" : ""}</span
  >`;
}

/** Per VM, whether each membership holds, as an instance's chips say it. */
export function vmChips(m: MembershipView): Safe | "" {
  if (!m.vms || m.vms.length === 0) return "";
  const known = m.vms.filter((v) => v.state !== "unknown");
  return html`<span>${known.filter((v) => v.state === m.declared).length}/${m.vms.length} VMs ${m.declared}</span>
    <div class="chips">
      ${m.vms.map(
        (v) =>
          html`<span
            class="chip ${v.state === "unknown" ? "idle" : v.state === m.declared ? "ok" : "bad"}"
            title="${v.note ?? v.vmId}"
            >${tail(v.vmId)} ${v.state}${v.stale ? " (stale)" : ""}</span
          >`,
      )}
    </div>`;
}

/** Long: one HTML template for the VM/NIC table. */
export function vmNicTable(vms: readonly VmNicsView[] | undefined, memberships: readonly MembershipView[]): Safe | "" {
  if (!vms) return "";
  if (vms.length === 0)
    return html`<h3>NICs</h3>
      <p class="empty">No VM cached yet: the next reconcile reads them.</p>`;
  const drifts = memberships.flatMap((m) => {
    const d = (m as Partial<MembershipWithDrift>).drift;
    return d ? [d] : [];
  });
  const rows = vms.flatMap((vm) =>
    vm.nics.flatMap((nic) => {
      const marks = html`${nic.stale ? html`<span class="badge warn" title="${nic.staleReason ?? ""}">stale</span>` : ""}
      ${drifts.filter((d) => d.resourceId.toLowerCase() === nic.nicId.toLowerCase()).map(driftMark)}`;
      const head = html`<td>${resourceId(vm.vmId, 1)}</td>
        <td>
          <strong>${nic.name}</strong>${nic.primary ? html` <span class="badge idle">primary</span>` : ""}
          ${resourceId(nic.nicId, 1)}
        </td>`;
      if (nic.ipConfigurations.length === 0)
        return [
          html`<tr>
            ${head}
            <td colspan="2"><span class="empty">${nic.note ?? "no ip configuration"}</span></td>
            <td>${marks}</td>
          </tr>`,
        ];
      return nic.ipConfigurations.map(
        (c) =>
          html`<tr>
            ${head}
            <td>${c.name}</td>
            <td>
              <div class="chips">
                ${c.backendPools.length === 0 ? html`<span class="empty">no pool</span>` : c.backendPools.map(poolChip)}
              </div>
            </td>
            <td><span class="note" title="${nic.etag ?? ""}">read ${nic.readAt ?? "never"}</span>${marks}</td>
          </tr>`,
      );
    }),
  );
  return html`<h3>NICs (${vms.length === 1 ? "1 VM" : `${vms.length} VMs`})</h3>
    <table class="nics">
      <colgroup>
        <col style="width:16%" />
        <col style="width:20%" />
        <col style="width:12%" />
        <col style="width:32%" />
        <col style="width:20%" />
      </colgroup>
      <thead>
        <tr>
          <th>VM</th>
          <th>NIC</th>
          <th>IP configuration</th>
          <th>Pools</th>
          <th>Read · marks</th>
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>`;
}
