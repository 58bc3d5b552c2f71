import { describe, expect, it } from "vitest";
import { isDeleting } from "../../src/core/models";

describe("models", () => {
  it.each([
    ["Deleting", true],
    ["DELETING", true],
    ["Succeeded", false],
    ["Updating", false],
    [undefined, false],
  ])("sees provisioning state %j as being deleted: %j (never written)", (state, deleting) => {
    expect(isDeleting(state)).toBe(deleting);
  });
});
