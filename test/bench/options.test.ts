import { describe, expect, it } from "vitest";
import { benchOptions } from "../../bench/options";
import { timerBenchOptions } from "../../bench/timer/options";

describe("npm run bench's flags", () => {
  it("reads each flag with or without =", () => {
    expect(benchOptions(["--quick", "--runs", "3", "--only=burstOne,steady", "--strategies", "poolsync"])).toEqual({
      quick: true,
      runs: 3,
      only: ["burstOne", "steady"],
      strategies: ["poolsync"],
      out: undefined,
      reuseAzurite: false,
      render: false,
      slowOperations: false,
      hosts: undefined,
      hostRampS: 0,
      hostKillsS: [],
      hostEntry: "built",
      hostStarts: 4,
      help: false,
    });
    expect(benchOptions(["--slow-operations"]).slowOperations).toBe(true);
    expect(benchOptions(["--runs=2", "--out=/tmp/x", "--render", "--reuse-azurite"])).toMatchObject({
      quick: false,
      runs: 2,
      out: "/tmp/x",
      render: true,
      reuseAzurite: true,
    });
  });

  it("the hosts section's schedule: instances added over the first seconds, kills at given seconds", () => {
    expect(benchOptions(["--only=hosts", "--hosts=1,8", "--host-ramp=60", "--host-kills", "90,150.5"])).toMatchObject({
      hosts: [1, 8],
      hostRampS: 60,
      hostKillsS: [90, 150.5],
    });
    expect(() => benchOptions(["--host-kills=soon"])).toThrow(/^--host-kills needs a number from 0, got "soon"/);
  });

  it("how the hosts section's instances start: which hostProcess, and how many at once", () => {
    expect(benchOptions(["--host-entry=source", "--host-starts", "2"])).toMatchObject({
      hostEntry: "source",
      hostStarts: 2,
    });
    expect(() => benchOptions(["--host-entry=dist"])).toThrow(/^--host-entry is built or source, got "dist"/);
    expect(() => benchOptions(["--host-starts=0"])).toThrow(/^--host-starts needs a whole number above 0, got "0"/);
  });

  it("refuses unknown and malformed flags with the usage, instead of running another plan", () => {
    const usage = /\nusage: npm run bench --/;
    expect(() => benchOptions(["--quik"])).toThrow(/^Unknown option '--quik'/);
    expect(() => benchOptions(["--quik"])).toThrow(usage);
    expect(() => benchOptions(["--runs"])).toThrow(/^Option '--runs <value>' argument missing/);
    expect(() => benchOptions(["--runs", "three"])).toThrow(/^--runs needs a whole number above 0, got "three"/);
    expect(() => benchOptions(["--runs=0"])).toThrow(/^--runs needs a whole number above 0, got "0"/);
    expect(() => benchOptions(["--quick=yes"])).toThrow(/^Option '--quick' does not take an argument/);
    expect(() => benchOptions(["quick"])).toThrow(/^Unexpected argument 'quick'/);
    expect(benchOptions(["--only=latency", "--latency-minutes=2.5"])).toMatchObject({
      only: ["latency"],
      latencyMinutes: 2.5,
    });
    expect(() => benchOptions(["--latency-minutes=0"])).toThrow(/^--latency-minutes needs a number above 0, got "0"/);
    expect(benchOptions(["--only=hosts", "--hosts=2,8"]).hosts).toEqual([2, 8]);
    expect(() => benchOptions(["--hosts=2,two"])).toThrow(/^--hosts needs a whole number above 0, got "two"/);
  });
});

describe("npm run bench:timer's flags", () => {
  it("reads them, defaults otherwise", () => {
    const sweep = { sweepSubscriptions: 20, sweepGroups: 5, sweepPerGroup: 50 };
    expect(timerBenchOptions([])).toEqual({ entries: 10_000, stalePercent: 1, runs: 5, help: false, ...sweep });
    expect(timerBenchOptions(["--entries", "200", "--stale-percent=0", "--runs", "1"])).toEqual({
      entries: 200,
      stalePercent: 0,
      runs: 1,
      help: false,
      ...sweep,
    });
    expect(
      timerBenchOptions(["--sweep-subscriptions", "2", "--sweep-groups=3", "--sweep-per-group", "4"]),
    ).toMatchObject({
      sweepSubscriptions: 2,
      sweepGroups: 3,
      sweepPerGroup: 4,
    });
  });

  it("the hosts section's schedule: instances added over the first seconds, kills at given seconds", () => {
    expect(benchOptions(["--only=hosts", "--hosts=1,8", "--host-ramp=60", "--host-kills", "90,150.5"])).toMatchObject({
      hosts: [1, 8],
      hostRampS: 60,
      hostKillsS: [90, 150.5],
    });
    expect(() => benchOptions(["--host-kills=soon"])).toThrow(/^--host-kills needs a number from 0, got "soon"/);
  });

  it("refuses unknown and malformed flags with the usage", () => {
    expect(() => timerBenchOptions(["--entry", "5"])).toThrow(
      /^Unknown option '--entry'[\s\S]*\nusage: npm run bench:timer/,
    );
    expect(() => timerBenchOptions(["--entries", "1e3.5"])).toThrow(
      /^--entries needs a whole number above 0, got "1e3.5"/,
    );
    expect(() => timerBenchOptions(["--stale-percent", "150"])).toThrow(
      /^--stale-percent needs a number from 0 to 100, got "150"/,
    );
    expect(() => timerBenchOptions(["--runs"])).toThrow(/^Option '--runs <value>' argument missing/);
  });
});
