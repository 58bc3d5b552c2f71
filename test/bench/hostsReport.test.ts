import { describe, expect, it } from "vitest";
import { renderHosts } from "../../bench/hostsReport";
import type { Results } from "../../bench/report";

const one = (n: number) => ({ median: n, min: n, max: n, runs: [n] });

function results(convergeByHosts: Record<number, number>): Results {
  const burstWide: Record<string, unknown> = { bound: { boundS: 37.2 } };
  const contention: Record<string, unknown> = {};
  for (const [hosts, convergeS] of Object.entries(convergeByHosts)) {
    burstWide[hosts] = {
      runs: [{}],
      summary: { convergeS: one(convergeS), maxModelWritesPerScaleSet: one(1), status412: one(0), status429: one(0) },
    };
    contention[hosts] = {
      runs: [{}],
      summary: {
        lostOurs: one(0),
        lostTheirs: one(0),
        theirOps: one(250),
        modelWrites: one(40),
        status412: one(40),
        status429: one(0),
      },
    };
  }
  return {
    generatedAt: "2026-12-05T00:00:00.000Z",
    mode: "full",
    runs: 1,
    machine: {},
    profile: {},
    plan: {},
    workloads: { hosts: { burstWide, contention } },
    durationS: 1,
  };
}

describe("the many-hosts section", () => {
  it("names the host counts measured and judges the most hosts against one", () => {
    // 8 hosts slower than 1 while 4 is faster: the verdict must be about 8.
    const text = renderHosts(results({ 1: 49.2, 2: 45.4, 4: 45.4, 8: 60.5 }));
    expect(text).toContain("with 1, 2, 4 and 8 hosts");
    expect(text).toContain("8 hosts no slower than 1 — **missed** (60.5 s vs 49.2 s)");
    expect(text).toMatch(/\| 8 \| 60\.5 \|/);
  });

  it("says the instances were processes, how they came and went, and each count's kills and memory", () => {
    const r = results({ 1: 49.2, 8: 45.4 });
    const hosts = r.workloads.hosts as { burstWide: Record<string, { runs: unknown[] }>; schedule?: unknown };
    hosts.burstWide["8"]!.runs = [{ processes: { hostsStarted: 8, hostsKilled: 1, killedHeld: 9, rssMaxMB: 210 } }];
    hosts.schedule = { rampS: 30, killsS: [60] };
    const text = renderHosts(r);
    expect(text).toContain("Each host is an OS process of its own");
    expect(text).toContain("added the others evenly over its first 30 real seconds");
    expect(text).toContain("At 60 s into each workload one host holding messages was SIGKILLed");
    expect(text).toMatch(/\| 8 \| 45\.4 \|.*\| 8 \/ 1 \(9\) \| 210 \|$/m);
    expect(text).toMatch(/\| 1 \| 49\.2 \|.*\| – \| – \|$/m);
  });

  it("says what the instances ran, how many started at once, and what a start cost", () => {
    const r = results({ 1: 49.2, 8: 45.4 });
    const hosts = r.workloads.hosts as { burstWide: Record<string, { runs: unknown[] }>; schedule?: unknown };
    hosts.burstWide["8"]!.runs = [
      {
        processes: {
          hostsStarted: 8,
          hostsKilled: 0,
          killedHeld: 0,
          rssMaxMB: 120,
          startS: [1.2, 3.4, 2.5, 9.9, 3.0],
          startCpuS: [0.9, 1.1, 1.0, 1.3, 1.2],
        },
      },
    ];
    hosts.schedule = { rampS: 0, killsS: [], entry: "built", maxStarting: 4 };
    const text = renderHosts(r);
    expect(text).toContain(
      "Each instance ran the built JavaScript (dist/bench/hostProcess.js), at most 4 starting at once",
    );
    expect(text).toContain("| burst instance start s, median (slowest) | CPU s a start, median |");
    expect(text).toMatch(/\| 8 \| 45\.4 \|.*\| 3 \(9\.9\) \| 1\.1 \| 8 \/ 0 \(0\) \| 120 \|$/m);
    expect(text).toMatch(/\| 1 \| 49\.2 \|.*\| – \| – \| – \| – \|$/m);
  });

  it("says only the counts a run measured", () => {
    const text = renderHosts(results({ 1: 49.2, 2: 45.4 }));
    expect(text).toContain("with 1 and 2 hosts");
    expect(text).toContain("2 hosts no slower than 1 — met (45.4 s vs 49.2 s)");
    expect(text).not.toContain("| 4 |");
  });

  it("says the counts --hosts asked for, in order, also ones outside the default 1, 2, 4 and 8", () => {
    const text = renderHosts(results({ 3: 44.0, 16: 50.1 }));
    expect(text).toContain("with 3 and 16 hosts");
    expect(text).toMatch(/\| 3 \| 44(\.0)? \|/);
    expect(text).toMatch(/\| 16 \| 50\.1 \|/);
  });
});
