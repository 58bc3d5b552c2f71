import { html, type Safe } from "./html";
import type { DriftAnswer } from "./driftView";

/** A membership's most recent drift on the status page: who undid it, on what, when, and whether it is repaired. */
export function driftNote(drift: DriftAnswer | null | undefined): Safe | "" {
  if (!drift) return "";
  const where = drift.resourceId.split("/").filter(Boolean).pop() ?? drift.resourceId;
  return html`<div class="drift">
    <span class="chip ${drift.repairedAt ? "warn" : "bad"}" title="${drift.by.id} · app ${drift.by.appId}"
      >drift by ${drift.by.name}</span
    ><span class="note" title="${drift.resourceId}"
      >${drift.resourceKind} ${where} · ${drift.at} · ${drift.operation} ·
      ${drift.source === "event" ? "seen by its event" : "found by the timer"}${drift.correlationId ? ` · correlation ${drift.correlationId}` : ""}</span
    ><span class="note">${drift.repairedAt ? `repaired ${drift.repairedAt}` : "not repaired yet"}</span>
  </div>`;
}
