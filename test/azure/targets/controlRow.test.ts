import { describe, expect, it } from "vitest";
import { CONTROL_COLUMN, controlEntity, controlOf } from "../../../src/azure/targets/controlRow";
import { CONTROL_ROW } from "../../../src/azure/targets/rowKeys";
import { emptyControl } from "../../../src/core/control";

const NOW = Date.parse("2026-12-02T10:00:00Z");
const BOUNDS = { leaseMs: 60_000, maxRequeueMs: 86_400_000, maxDueMs: 3_600_000 };
const counts = () => ({ present: 2, absent: 1, byCaller: {} });

describe("controlRow", () => {
  it("stores the whole state in one column of the control row, and reads it back", () => {
    const state = { ...emptyControl(), seq: 4, lease: { ...emptyControl().lease, holder: "h", expiresAt: NOW + 1 } };
    const entity = controlEntity("p", state);
    expect(entity).toMatchObject({ partitionKey: "p", rowKey: CONTROL_ROW });
    expect(Object.keys(entity)).toHaveLength(3);
    expect(controlOf(entity, NOW, BOUNDS, counts)).toEqual({ state, problems: [] });
  });

  it("starts a target with no control row from its declarations' counts", () => {
    expect(controlOf(undefined, NOW, BOUNDS, counts)).toEqual({
      state: { ...emptyControl(), counts: counts() },
      problems: [],
    });
  });

  it("rebuilds an unreadable row from the declarations, saying why", () => {
    const { state, problems } = controlOf({ [CONTROL_COLUMN]: "{torn" }, NOW, BOUNDS, counts);
    expect(state).toEqual({ ...emptyControl(), counts: counts() });
    expect(problems).toEqual([expect.stringMatching(/^control row unreadable \(not JSON/)]);
  });

  it("passes on what the decoder dropped as out of bounds", () => {
    const planted = { ...emptyControl(), lease: { ...emptyControl().lease, holder: "h", expiresAt: NOW + 86_400_000 } };
    const { state, problems } = controlOf(controlEntity("p", planted), NOW, BOUNDS, counts);
    expect(state.lease.holder).toBe("");
    expect(problems).toEqual([expect.stringContaining("lease.expiresAt")]);
  });
});
