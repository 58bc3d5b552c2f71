import { describe, expect, it } from "vitest";
import { driftNote } from "../../src/intake/driftHtml";
import { driftAnswer, type DriftAnswer } from "../../src/intake/driftView";
import { DRIFT } from "./viewFixtures";

/** src/intake/driftHtml.ts: the status page's line on a membership's last drift: who, on what, how found, repaired. */
const drift: DriftAnswer = {
  ...driftAnswer(DRIFT),
  by: { ...DRIFT.by, name: "<b>ops</b>" },
  source: "timer",
};

describe("driftNote", () => {
  it("says who undid the membership, on which resource by its name, and that it is not repaired yet", () => {
    const text = String(driftNote(drift));
    expect(text).toContain("drift by &lt;b&gt;ops&lt;/b&gt;");
    expect(text).toContain("nic vm-1-nic · 2026-12-02T09:30:00.000Z");
    expect(text).toContain("found by the timer · correlation corr-1");
    expect(text).toContain("not repaired yet");
    expect(text).toContain('class="chip bad"');
  });

  it("marks a repaired drift as such, and one an event reported as seen by its event", () => {
    const text = String(
      driftNote({ ...drift, source: "event", repairedAt: "2026-12-02T09:31:00.000Z", correlationId: "" }),
    );
    expect(text).toContain("repaired 2026-12-02T09:31:00.000Z");
    expect(text).toContain("seen by its event");
    expect(text).not.toContain("correlation");
    expect(text).toContain('class="chip warn"');
  });

  it("shows nothing for a membership without drift", () => {
    expect(driftNote(null)).toBe("");
    expect(driftNote(undefined)).toBe("");
  });
});
