import { parseBackendPoolId, parseScaleSetId, parseTargetId } from "../core/resourceIds";
import { html, Safe } from "./html";
import type { MembershipView, Observation, ScaleSetView } from "./observedState";
import type { StatusReport } from "./statusReport";
import { driftNote } from "./driftHtml";
import { historyList } from "./historyHtml";
import type { HistoryEntry } from "../core/history";
import type { MembershipWithDrift } from "./driftView";
import { resourceId, vmChips, vmNicTable } from "./vmNicHtml";

/**
 * The status page: the same report as the JSON, for a person. One self-contained document (inline CSS, no script,
 * no external asset) so it works behind a function key and under a strict Content-Security-Policy.
 */

export const STATUS_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

const CSS = `
:root { color-scheme: light; --ink:#1f2430; --muted:#667085; --line:#e4e7ec; --bg:#f5f6f8; --card:#fff;
  --ok:#067647; --ok-bg:#dcfae6; --warn:#93370d; --warn-bg:#fef0c7; --bad:#b42318; --bad-bg:#fee4e2; --idle:#475467; --idle-bg:#eaecf0; }
* { box-sizing: border-box; }
body { margin:0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif; color:var(--ink); background:var(--bg); }
header { background:#101828; color:#fff; padding:16px 28px; display:flex; align-items:baseline; gap:16px; flex-wrap:wrap; }
header h1 { margin:0; font-size:20px; letter-spacing:.2px; }
header .meta { color:#d0d5dd; font-size:13px; }
header a { color:#b2ddff; margin-left:auto; font-size:13px; }
main { padding:20px 28px 40px; max-width:1400px; }
.cards { display:grid; grid-template-columns:repeat(auto-fit,minmax(170px,1fr)); gap:12px; margin-bottom:22px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:12px 14px; }
.card .label { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.6px; }
.card .value { font-size:26px; font-weight:650; margin:2px 0; }
.card .detail { color:var(--muted); font-size:12px; }
.card.alert { border-color:#fda29b; background:#fffbfa; }
.card.alert .value { color:var(--bad); }
section { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:16px 18px; margin-bottom:18px; }
section h2 { margin:0 0 2px; font-size:17px; }
section h2 + .sub { color:var(--muted); font-size:12px; margin-bottom:12px; word-break:break-all; }
h3 { font-size:13px; margin:14px 0 6px; color:var(--muted); text-transform:uppercase; letter-spacing:.6px; }
table { width:100%; border-collapse:collapse; }
th { text-align:left; font-size:12px; color:var(--muted); font-weight:600; padding:6px 8px; border-bottom:1px solid var(--line); white-space:nowrap; }
td { padding:8px; border-bottom:1px solid var(--line); vertical-align:top; }
tr:last-child td { border-bottom:none; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, monospace; font-size:12px; }
.id { color:var(--muted); font-size:11px; word-break:break-all; display:block; margin-top:2px; }
.badge { display:inline-block; padding:1px 8px; border-radius:999px; font-size:12px; font-weight:600; white-space:nowrap; }
.ok { color:var(--ok); background:var(--ok-bg); } .warn { color:var(--warn); background:var(--warn-bg); }
.bad { color:var(--bad); background:var(--bad-bg); } .idle { color:var(--idle); background:var(--idle-bg); }
.note { color:var(--muted); font-size:12px; display:block; margin-top:3px; }
.chips { display:flex; flex-wrap:wrap; gap:4px; margin-top:4px; }
.chip { font-size:11px; padding:0 6px; border-radius:4px; border:1px solid var(--line); }
.chip.ok { border-color:#abefc6; } .chip.bad { border-color:#fda29b; } .chip.idle { border-color:var(--line); }
.empty { color:var(--muted); }
ul.plain { margin:0; padding-left:18px; } ul.plain li { margin:3px 0; }
pre { margin:4px 0 0; white-space:pre-wrap; word-break:break-all; background:var(--bg); padding:6px 8px; border-radius:6px; max-height:7em; overflow:auto; }
footer { color:var(--muted); font-size:12px; padding:0 28px 28px; }
table.memberships, table.nics { table-layout:fixed; }
td { overflow-wrap:anywhere; }
.rid { display:block; color:var(--muted); font-size:11px; white-space:nowrap; overflow:hidden; text-overflow:ellipsis; margin-top:2px; }
input.copy { display:block; width:100%; border:none; background:transparent; color:var(--muted); padding:0; margin-top:1px;
  font: 10px ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, monospace; text-overflow:ellipsis; }
input.copy:focus { outline:1px solid var(--line); background:var(--bg); }
`;

function ago(iso: string | undefined, now: number): string {
  if (!iso) return "never";
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

const OUTCOME_CLASS: Record<string, string> = {
  applied: "ok",
  pending: "warn",
  failed: "bad",
  refused: "bad",
  "target-deleted": "idle",
  "target-deleting": "warn",
};
const SYNC_TEXT: Record<string, [string, string]> = {
  "in-sync": ["in sync", "ok"],
  drift: ["drift", "bad"],
  unknown: ["unknown", "idle"],
};

function observedBadge(o: Observation, declared: string): Safe {
  const cls = o.state === "unknown" ? "idle" : o.state === declared ? "ok" : "bad";
  return html`<span class="badge ${cls}">${o.state}</span
    >${o.stale ? html` <span class="badge warn" title="${o.staleReason ?? ""}">stale</span>` : ""}`;
}

const KIND_WORDS: Record<string, string> = {
  loadBalancerBackendPool: "load balancer backend pool",
  inboundNatPool: "inbound NAT pool",
  applicationGatewayBackendPool: "application gateway pool",
};

function poolLabel(id: string): Safe {
  const p = parseBackendPoolId(id);
  const label = p.ok ? `${p.value.parent} / ${p.value.name}` : id;
  return html`<strong>${label}</strong>${resourceId(id, 2)}`;
}

/** The pool's kind (issue 43), the declared admin state and a move's other half, under the pool's name. */
function kindNotes(m: MembershipView): Safe {
  const kind = `${KIND_WORDS[m.poolKind] ?? "pool"}${m.outcome.via === "pool" ? " · IP-based: the pool lists the addresses" : ""}`;
  return html`<span class="note">${kind}</span>${
      m.adminState
        ? html`<span class="badge ${m.adminState === "Down" ? "warn" : "idle"}" title="admin state"
            >admin ${m.adminState}${m.adminInstances ? ` on ${m.adminInstances.join(", ")}` : ""}</span
          >`
        : ""
    }${m.movedTo ? html`<span class="note">moving to ${resourceId(m.movedTo, 2)}</span>` : ""}`;
}

function scaleSetLabel(id: string): Safe {
  const s = parseScaleSetId(id);
  return s.ok
    ? html`<strong>${s.value.name}</strong><span class="id">${id}</span>`
    : html`<span class="mono">${id}</span>`;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function membershipRow(m: MembershipView, now: number, isVm: boolean): Safe {
  const [syncText, syncClass] = SYNC_TEXT[m.sync] ?? ["unknown", "idle"];
  const known = m.instances.filter((i) => i.state !== "unknown");
  const matching = known.filter((i) => i.state === m.declared).length;
  return html`<tr>
    <td>${poolLabel(m.backendPoolId)}${kindNotes(m)}</td>
    <td>${m.ipConfiguration ?? html`<span class="empty">primary</span>`}</td>
    <td>
      <span class="badge ${m.declared === "present" ? "ok" : "idle"}">${m.declared}</span
      ><span class="note"
        >${ago(m.declaredAt, now)} by <span title="${m.declaredBy.id}">${m.declaredBy.name}</span></span
      >
    </td>
    <td>
      ${isVm ? html`<span class="empty">no model</span>` : observedBadge(m.model, m.declared)}${m.model.note ? html`<span class="note">${m.model.note}</span>` : ""}
    </td>
    <td>
      ${vmChips(m)}${
        m.vms && m.vms.length > 0 && m.instances.length === 0
          ? ""
          : m.instances.length === 0
            ? html`<span class="empty">none cached</span>`
            : html`<span>${matching}/${m.instances.length} ${m.declared}</span>
                <div class="chips">
                  ${m.instances.map(
                    (i) =>
                      html`<span
                        class="chip ${i.state === "unknown" ? "idle" : i.state === m.declared ? "ok" : "bad"}"
                        title="${i.etag ?? ""}"
                        >#${i.instanceId} ${i.state}${i.stale ? " (stale)" : ""}</span
                      >`,
                  )}
                </div>`
      }
    </td>
    <td><span class="badge ${syncClass}">${syncText}</span>${driftNote((m as Partial<MembershipWithDrift>).drift)}</td>
    <td>
      <span class="badge ${OUTCOME_CLASS[m.outcome.kind] ?? "idle"}">${m.outcome.kind}</span
      ><span class="note"
        >${ago(m.outcome.at, now)}${m.attempts > 0 ? ` · ${m.attempts} failed attempt${m.attempts > 1 ? "s" : ""}` : ""}</span
      >${m.outcome.reason ? html`<span class="note">${m.outcome.reason}</span>` : ""}
    </td>
    <td class="mono">${m.outcome.appliedEtag ?? html`<span class="empty">—</span>`}</td>
  </tr>`;
}

/** Long: one HTML template for a scale set's section. */
function scaleSetSection(v: ScaleSetView, now: number): Safe {
  const ref = parseTargetId(v.scaleSetId);
  const name = ref.ok ? ref.value.name : v.scaleSetId;
  const where = ref.ok ? `resource group ${ref.value.resourceGroup} · subscription ${ref.value.subscriptionId}` : "";
  const model = v.model;
  const vm = v.vms?.[0];
  const modelLine = !v.cacheEnabled
    ? html`<span class="badge idle">cache disabled</span>`
    : ref.ok && ref.value.kind === "vm"
      ? vm
        ? html`VM ETag <code>${vm.etag ?? ""}</code> read ${ago(vm.readAt, now)} ·
            ${vm.nics.length === 1 ? "1 NIC" : `${vm.nics.length} NICs`}${vm.stale ? html` <span class="badge warn" title="${vm.staleReason ?? ""}">re-read next: ${vm.staleReason ?? "marked"}</span>` : ""}`
        : html`<span class="badge idle">VM not cached yet</span>`
      : model.cached
        ? html`model ETag <code>${model.etag}</code> read
            ${ago(model.readAt, now)}${model.capacity !== undefined ? ` · capacity ${model.capacity}` : ""}${model.stale ? html` <span class="badge warn" title="${model.staleReason ?? ""}">re-read next: ${model.staleReason ?? "marked"}</span>` : ""}`
        : html`<span class="badge idle">model not cached yet</span>`;
  const others = v.observedPools.filter((p) => !p.declared);
  return html`<section aria-label="${ref.ok && ref.value.kind === "vm" ? "VM" : "scale set"} ${name}">
    <h2>${name}</h2>
    <div class="sub">${where}<br />${modelLine}</div>
    ${
      v.memberships.length === 0
        ? html`<p class="empty">No declarations for this scale set.</p>`
        : html`<table class="memberships">
            <colgroup>
              <col style="width:19%" />
              <col style="width:9%" />
              <col style="width:11%" />
              <col style="width:11%" />
              <col style="width:14%" />
              <col style="width:16%" />
              <col style="width:13%" />
              <col style="width:7%" />
            </colgroup>
            <thead>
              <tr>
                <th>Backend pool</th>
                <th>IP configuration</th>
                <th>Declared</th>
                <th>Observed (model)</th>
                <th>Instances / VMs</th>
                <th>Sync</th>
                <th>Last outcome</th>
                <th>Applied ETag</th>
              </tr>
            </thead>
            <tbody>
              ${v.memberships.map((m) => membershipRow(m, now, ref.ok && ref.value.kind === "vm"))}
            </tbody>
          </table>`
    }
    ${
      others.length > 0
        ? html`<h3>Other pools on this scale set (not declared here, left alone)</h3>
            <ul class="plain">
              ${others.map((p) => html`<li>${poolLabel(p.backendPoolId)} <span class="note">on ${p.nicConfiguration} / ${p.ipConfiguration}</span></li>`)}
            </ul>`
        : ""
    }
    ${vmNicTable(v.vms, v.memberships)}
    ${v.vmsTruncated ? html`<p class="empty">More VMs are cached than are shown.</p>` : ""}
    ${historyList((v as ScaleSetView & { history?: HistoryEntry[] }).history)}
  </section>`;
}

/** Whose count the cache figures are: the timer's (past a view's scan limit), or a partial one. */
function censusNote(c: StatusReport["cache"]): string {
  if (c.asOf) return ` · counted by the timer at ${c.asOf}`;
  return c.truncated ? " · at least (partial count)" : "";
}

function card(label: string, value: number, detail: string, alert = false): Safe {
  return html`<div class="card${alert ? " alert" : ""}">
    <div class="label">${label}</div>
    <div class="value">${value}</div>
    <div class="detail">${detail}</div>
  </div>`;
}

/** Long: one HTML template: the page's sections in the order they show, each already a function of its own. */
export function renderStatusPage(r: StatusReport, opts: { jsonHref?: string } = {}): string {
  const now = Date.parse(r.generatedAt);
  const d = r.declarations;
  const outcomeDetail = Object.entries(d.byOutcome)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`)
    .join(" · ");
  const recent = [
    ...r.recent.preconditionFailures.map((p) => ({ ...p, what: "412 precondition failed" })),
    ...r.recent.throttles.map((p) => ({ ...p, what: "throttled" })),
    ...(r.recent.instanceFailures ?? []).map((p) => ({ ...p, what: "instance refused its write" })),
  ];
  const page = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta http-equiv="refresh" content="15" />
        <title>poolsync status</title>
        <style>
          ${new Safe(CSS)}
        </style>
      </head>
      <body>
        <header>
          <h1>poolsync status</h1>
          <span class="meta"
            >generated ${r.generatedAt} · refreshes every 15 s · observed = as poolsync last read it from ARM</span
          >${opts.jsonHref ? html`<a href="${opts.jsonHref}">JSON</a>` : ""}
        </header>
        <main>
          <div class="cards">
            ${card("Declarations", d.total, outcomeDetail || "none yet")}
            ${card("Failed or refused", d.byOutcome.failed + d.byOutcome.refused, "need attention", d.byOutcome.failed + d.byOutcome.refused > 0)}
            ${card("Cache rows", r.cache.rows, r.cache.enabled ? `${plural(r.cache.scaleSets, "scale set", "scale sets")} · ${plural(r.cache.instances, "instance", "instances")}${censusNote(r.cache)}` : "cache disabled")}
            ${card("To re-read", r.cache.stale + r.cache.expired, `${r.cache.stale} marked (an event, a 412 or poolsync's own write) · ${r.cache.expired} past the ${r.cache.ttlSeconds} s TTL`)}
            ${card("Queue depth", r.queue.depth, r.queue.name)}
            ${card("Poison", r.queue.poison, r.queue.poisonName, r.queue.poison > 0)}
          </div>
          ${
            r.scaleSets.length === 0
              ? html`<section>
                  <h2>No declarations yet</h2>
                  <div class="sub">PUT /api/memberships (or <code>npx poolsync declare</code>) to declare one.</div>
                </section>`
              : r.scaleSets.map((v) => scaleSetSection(v, now))
          }
          ${r.scaleSetsTruncated ? html`<p class="empty">More scale sets have declarations than are shown; ask for one with ?scaleSetId=…</p>` : ""}
          <section aria-label="recent 412s, throttles and refused instances">
            <h2>Recent 412s, throttles and refused instances</h2>
            <div class="sub">
              Each scale set's last reconcile that met a 412 or a throttle, and declarations whose outcome names one;
              every single write is in the logs (arm.write).
            </div>
            ${
              recent.length === 0
                ? html`<p class="empty">None recorded.</p>`
                : html`<table>
                    <thead>
                      <tr>
                        <th>When</th>
                        <th>What</th>
                        <th>Where</th>
                        <th>Reason</th>
                      </tr>
                    </thead>
                    <tbody>
                      ${recent.map(
                        (p) =>
                          html`<tr>
                            <td>${ago(p.at, now)}</td>
                            <td><span class="badge ${p.what === "throttled" ? "warn" : "bad"}">${p.what}</span></td>
                            <td>
                              ${scaleSetLabel(p.scaleSetId)}${p.instanceId ? ` #${p.instanceId}` : ""}${p.backendPoolId ? html`<span class="id">${p.backendPoolId}</span>` : ""}
                            </td>
                            <td>${p.reason}</td>
                          </tr>`,
                      )}
                    </tbody>
                  </table>`
            }
          </section>
          <section aria-label="stale cache entries">
            <h2>Stale cache entries</h2>
            <div class="sub">Re-read by the timer next (oldest first).</div>
            ${
              r.staleEntries.length === 0
                ? html`<p class="empty">None.</p>`
                : html`<table>
                    <thead>
                      <tr>
                        <th>Scale set</th>
                        <th>Instance</th>
                        <th>Since</th>
                        <th>Why</th>
                      </tr>
                    </thead>
                    <tbody>
                      ${r.staleEntries.map(
                        (e) =>
                          html`<tr>
                            <td>${scaleSetLabel(e.scaleSetId)}</td>
                            <td>${e.instanceId ?? "model"}</td>
                            <td>${ago(e.since, now)}</td>
                            <td>${e.reason}</td>
                          </tr>`,
                      )}
                    </tbody>
                  </table>`
            }
          </section>
          <section aria-label="poison messages">
            <h2>Poison messages</h2>
            <div class="sub">Messages that can never succeed, with the reason; nothing is dropped silently.</div>
            ${
              !r.poison || r.poison.length === 0
                ? html`<p class="empty">None.</p>`
                : html`<table>
                    <thead>
                      <tr>
                        <th>When</th>
                        <th>Reason</th>
                        <th>Received</th>
                      </tr>
                    </thead>
                    <tbody>
                      ${r.poison.map(
                        (p) =>
                          html`<tr>
                            <td>${ago(p.insertedOn, now)}</td>
                            <td>${p.reason}</td>
                            <td><pre>${p.received}</pre></td>
                          </tr>`,
                      )}
                    </tbody>
                  </table>`
            }
          </section>
        </main>
        <footer>
          poolsync · counts from Storage only, no ARM call · JSON: GET /api/status with Accept: application/json
        </footer>
      </body>
    </html> `;
  return page.text;
}
