import type { HistoryEntry } from "../core/history";
import { html, type Safe } from "./html";

/** A target's last history entries on the status page, oldest of them first, one line each. */

const tail = (id: string) => id.split("/").filter(Boolean).slice(-1)[0] ?? id;

function line(e: HistoryEntry): Safe {
  switch (e.kind) {
    case "declaration":
      return html`<li>
        <span class="mono">${e.at}</span> declared ${e.state} ${tail(e.backendPoolId)} by ${e.by.name ?? e.by.id}
        (${e.by.via})
      </li>`;
    case "write":
      return html`<li>
        <span class="mono">${e.at}</span> wrote ${e.resourceKind}
        <span title="${e.resourceId}">${tail(e.resourceId)}</span> ${e.etagBefore} → ${e.etagAfter || "—"}
        ${e.added.length ? html`+${e.added.map(tail).join(", ")}` : ""}
        ${e.removed.length ? html`−${e.removed.map(tail).join(", ")}` : ""} · ${e.outcome}
      </li>`;
    case "drift":
      return html`<li class="drift">
        <span class="mono">${e.at}</span> drift on <span title="${e.resourceId}">${tail(e.resourceId)}</span> by
        ${e.by.name} (${e.operation}) · ${e.repairedAt ? `repaired ${e.repairedAt}` : "not repaired"}
      </li>`;
    case "failure":
      return html`<li><span class="mono">${e.at}</span> ${e.result}: ${e.reason}</li>`;
  }
}

export function historyList(entries: readonly HistoryEntry[] | undefined): Safe | "" {
  if (!entries || entries.length === 0) return "";
  return html`<h3>History (last ${entries.length})</h3>
    <ul class="history">
      ${[...entries].reverse().map(line)}
    </ul>`;
}
