import { describe, expect, it } from "vitest";
import {
  declarationKey,
  dueForRetry,
  finishes,
  fromIpSelectorText,
  ipSelectorText,
  NOT_FOUND_FIRST_WAIT_MS,
  NOT_FOUND_MAX_WAIT_MS,
  notFoundOutcome,
  QUEUE_DECLARER,
  toIntent,
  waitingForTarget,
  waitsForRetry,
  type Outcome,
  type StoredDeclaration,
} from "../../src/core/declarations";

const POOL =
  "/subscriptions/0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d/resourceGroups/net/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/be";
const T0 = Date.parse("2026-12-01T00:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

const stored = (outcome: Outcome): StoredDeclaration => ({
  scaleSetId: "vmss",
  backendPoolId: POOL,
  ipConfiguration: "",
  state: "present",
  declaredAt: iso(T0),
  requestId: "r1",
  declaredBy: QUEUE_DECLARER,
  outcome,
  attempts: 1,
  rowEtag: "e",
});

describe("declarations", () => {
  it("stores an ip-version selector in the one text older rows keep, and reads it back as the two fields", () => {
    expect(ipSelectorText({ ipConfiguration: "nic-b", ipVersion: "IPv6" })).toBe("nic-b/@IPv6");
    expect(ipSelectorText({ ipConfiguration: "", ipVersion: "IPv4" })).toBe("@IPv4");
    expect(ipSelectorText({ ipConfiguration: "nic-b/ipconfig2" })).toBe("nic-b/ipconfig2");
    expect(fromIpSelectorText("nic-b/@IPv6")).toEqual({ ipConfiguration: "nic-b", ipVersion: "IPv6" });
    expect(fromIpSelectorText("@ipv6")).toEqual({ ipConfiguration: "", ipVersion: "IPv6" });
    expect(fromIpSelectorText("ipconfig1")).toEqual({ ipConfiguration: "ipconfig1" });
  });

  it("knows one declaration per pool and ip configuration, whatever the letter case", () => {
    const a = declarationKey({ backendPoolId: POOL, ipConfiguration: "NIC/IpConfig1" });
    expect(a).toBe(declarationKey({ backendPoolId: POOL.toUpperCase(), ipConfiguration: "nic/ipconfig1" }));
    expect(a).not.toBe(declarationKey({ backendPoolId: POOL, ipConfiguration: "nic/ipconfig2" }));
    expect(declarationKey({ backendPoolId: POOL, ipConfiguration: "", ipVersion: "IPv6" })).not.toBe(
      declarationKey({ backendPoolId: POOL, ipConfiguration: "" }),
    );
  });

  it("carries a move's destination only on its absent half", () => {
    const d = { ...stored({ kind: "pending", at: iso(T0) }), movedTo: "other" };
    expect(toIntent({ ...d, state: "absent" })).toEqual({
      backendPoolId: POOL,
      selector: { kind: "primary" },
      state: "absent",
      movedTo: "other",
    });
    expect(toIntent(d)).not.toHaveProperty("movedTo");
  });

  it("finishes a declaration only by applying it where it was not, or applying it everywhere for the first time", () => {
    const pending = stored({ kind: "pending", at: iso(T0) });
    const applied = stored({ kind: "applied", at: iso(T0) });
    expect(finishes(pending, { kind: "applied" })).toBe(true);
    expect(finishes(pending, { kind: "failed" })).toBe(false);
    expect(finishes(applied, { kind: "applied" })).toBe(false);
    expect(finishes(applied, { kind: "applied", appliedEverywhere: true })).toBe(true);
    expect(
      finishes(stored({ kind: "applied", at: iso(T0), appliedEverywhere: true }), {
        kind: "applied",
        appliedEverywhere: true,
      }),
    ).toBe(false);
  });

  it("waits after a 404 five minutes, then twice as long each time, never more than a day", () => {
    const first = notFoundOutcome({ kind: "pending", at: iso(T0) }, "404 scale set not found", T0);
    expect(first.kind).toBe("target-deleted");
    expect(Date.parse(first.retryAt!) - T0).toBe(NOT_FOUND_FIRST_WAIT_MS);
    expect(first.reason).toContain("404 scale set not found; waiting for the target to exist");
    const second = notFoundOutcome({ ...first, at: iso(T0) }, "404", T0 + NOT_FOUND_FIRST_WAIT_MS);
    expect(Date.parse(second.retryAt!) - (T0 + NOT_FOUND_FIRST_WAIT_MS)).toBe(2 * NOT_FOUND_FIRST_WAIT_MS);
    const long = { kind: "target-deleted" as const, at: iso(T0), retryAt: iso(T0 + 20 * 3_600_000) };
    expect(Date.parse(notFoundOutcome(long, "404", T0).retryAt!) - T0).toBe(NOT_FOUND_MAX_WAIT_MS);
  });

  it("defers a target-deleted declaration until its look is due, but not for a wait poolsync never records", () => {
    const at = (retryAt: number) => stored({ kind: "target-deleted", at: iso(T0), retryAt: iso(retryAt) });
    expect(waitingForTarget(at(T0 + 60_000), T0)).toBe(true);
    expect(waitingForTarget(at(T0 + 60_000), T0 + 60_000)).toBe(false);
    expect(waitingForTarget(at(T0 + NOT_FOUND_MAX_WAIT_MS + 1), T0)).toBe(false);
    expect(waitingForTarget(stored({ kind: "failed", at: iso(T0), retryAt: iso(T0 + 60_000) }), T0)).toBe(false);
  });

  it("holds a failed declaration back until its retry time, then calls it due", () => {
    const failed = stored({ kind: "failed", at: iso(T0), retryAt: iso(T0 + 30_000) });
    expect([waitsForRetry(failed, T0), dueForRetry(failed, T0)]).toEqual([true, false]);
    expect([waitsForRetry(failed, T0 + 30_000), dueForRetry(failed, T0 + 30_000)]).toEqual([false, true]);
    const refused = stored({ kind: "refused", at: iso(T0), retryAt: iso(T0 + 30_000) });
    expect([waitsForRetry(refused, T0), dueForRetry(refused, T0 + 60_000)]).toEqual([false, false]);
  });
});
