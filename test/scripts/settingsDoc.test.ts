import { describe, expect, it } from "vitest";
import { currentSettingsDoc, renderSettingsDoc } from "../../scripts/settingsDoc";

describe("docs/settings.md", () => {
  it("is the table src/config.ts SETTINGS declares (npm run docs:settings rewrites it)", async () => {
    expect(currentSettingsDoc()).toBe(await renderSettingsDoc());
  });
});
