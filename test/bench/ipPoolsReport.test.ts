import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { renderIpPools, writeIpPoolsSection, type IpPoolsResult } from "../../bench/ipPools";

function result(ours: { lostOurs: number; lostTheirs: number; burstWrites: number }): IpPoolsResult {
  const c = { theirOps: 100, poolWrites: 20, status412: 1, status409: 2, seconds: 10 };
  const b = { held: 50, poolReads: 2, status412: 0, status409: 0, seconds: 1 };
  return {
    generatedAt: "2026-12-06T00:00:00.000Z",
    commit: "abc1234",
    node: "v22.23.3",
    machine: { cpus: 2, platform: "linux x64" },
    size: { changes: 60, targets: 20, writers: 3, writerGapsMs: [150], burst: 50 },
    contention: [
      {
        strategy: "poolsync",
        writerGapMs: 150,
        lostOurs: ours.lostOurs,
        lostTheirs: ours.lostTheirs,
        lostOutcomes: ours.lostOurs > 0 ? { "failed: gave up after 8 re-enqueued attempts": ours.lostOurs } : {},
        ...c,
      },
      { strategy: "last-writer-wins", writerGapMs: 150, lostOurs: 0, lostTheirs: 7, lostOutcomes: {}, ...c },
    ],
    burst: [
      { strategy: "poolsync", poolWrites: ours.burstWrites, ...b },
      { strategy: "last-writer-wins", poolWrites: 60, ...b },
    ],
    durationS: 100,
  };
}

describe("the IP-based pool section of RESULTS.md", () => {
  it("says whether issue 43's targets were met, from poolsync's row only", () => {
    expect(renderIpPools(result({ lostOurs: 0, lostTheirs: 0, burstWrites: 1 }))).toMatch(
      /0 lost on either side — writers every 150 ms: met .*one pool write — met \(1 PUT, 50\/50/,
    );
    const missed = renderIpPools(result({ lostOurs: 1, lostTheirs: 2, burstWrites: 3 }));
    expect(missed).toMatch(/writers every 150 ms: \*\*missed\*\* \(ours 1, theirs 2 of 100\)/);
    expect(missed).toContain("| 1 failed: gave up after 8 re-enqueued attempts |");
    expect(missed).toMatch(/one pool write — \*\*missed\*\* \(3 PUT/);
  });

  it("replaces its own section in place and leaves the others as they were", () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "ippools-")), "RESULTS.md");
    writeFileSync(file, "## 1. Before\n\n<!-- ipPools:start -->\nold\n<!-- ipPools:end -->\n\n## 2a. After\n");
    writeIpPoolsSection(file, result({ lostOurs: 0, lostTheirs: 0, burstWrites: 1 }));
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain("\nold\n");
    expect(text.indexOf("## 1. Before")).toBeLessThan(text.indexOf("## 1b. Contention and a burst"));
    expect(text.indexOf("## 1b. Contention and a burst")).toBeLessThan(text.indexOf("## 2a. After"));
    expect(text.match(/ipPools:start/g)).toHaveLength(1);
    // A file without the section gets it at its end.
    writeFileSync(file, "## 1. Only\n");
    writeIpPoolsSection(file, result({ lostOurs: 0, lostTheirs: 0, burstWrites: 1 }));
    expect(readFileSync(file, "utf8")).toMatch(/^## 1\. Only\n\n<!-- ipPools:start -->/);
  });
});
