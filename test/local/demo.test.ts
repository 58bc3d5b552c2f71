import { describe, expect, it } from "vitest";
import { parseDemoFlags } from "../../local/demo/demo";

describe("npm run demo's flags", () => {
  it("reads --via and --verbose in either form", () => {
    expect(parseDemoFlags([])).toEqual({ via: "auto", verbose: false, flex: false, help: false });
    expect(parseDemoFlags(["--via", "queue", "--verbose"])).toEqual({
      via: "queue",
      verbose: true,
      flex: false,
      help: false,
    });
    expect(parseDemoFlags(["--via=api"])).toEqual({ via: "api", verbose: false, flex: false, help: false });
    expect(parseDemoFlags(["--flex"]).flex).toBe(true);
    expect(parseDemoFlags(["-h"]).help).toBe(true);
  });

  it("refuses unknown and malformed flags with the usage", () => {
    expect(() => parseDemoFlags(["--bogus"])).toThrow(/^Unknown option '--bogus'[\s\S]*\nusage: npm run demo/);
    expect(() => parseDemoFlags(["--via"])).toThrow(/^Option '--via <value>' argument missing/);
    expect(() => parseDemoFlags(["--via", "carrier-pigeon"])).toThrow(
      /^--via must be auto, queue or api, got "carrier-pigeon"\nusage: npm run demo/,
    );
    expect(() => parseDemoFlags(["--verbose=1"])).toThrow(/^Option '--verbose' does not take an argument/);
    expect(() => parseDemoFlags(["queue"])).toThrow(/^Unexpected argument 'queue'/);
  });
});
