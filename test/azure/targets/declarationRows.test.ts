import { describe, expect, it } from "vitest";
import {
  decodeDeclaration,
  declarationEntity,
  outcomeUpdate,
  outranks,
} from "../../../src/azure/targets/declarationRows";
import type { Declaration } from "../../../src/core/declarations";
import { declared, NOW } from "../../support/targetPass";

const AT = new Date(NOW).toISOString();
/** Every column a declaration can fill: an IPv6 ip configuration, a caller, an admin state for some instances. */
const declaration: Declaration = {
  ...declared("pool", "req-1"),
  ipConfiguration: "nic",
  ipVersion: "IPv6",
  declaredBy: { id: "principal-1", name: "deployer", via: "entra" },
  adminState: "Down",
  adminInstances: ["3"],
};
/** The entity as the Table hands it back (with its ETag). */
const stored = (d: Declaration = declaration) => ({ ...declarationEntity("p", d, AT), etag: 'W/"1"' });

describe("declarationRows", () => {
  it("reads a new declaration's row back as the declaration, pending with no attempts", () => {
    const decoded = decodeDeclaration(stored(), NOW);
    if (!decoded.ok) throw new Error(decoded.reason);
    expect(decoded.declaration).toMatchObject({ ...declaration, outcome: { kind: "pending", at: AT }, attempts: 0 });
    expect(decoded.declaration.rowEtag).toBe('W/"1"');
    expect(decoded.removedAt).toBeUndefined();
  });

  it("refuses a row under another key than its own fields give, and a row out of its schema, naming the column", () => {
    const moved = decodeDeclaration({ ...stored(), rowKey: "%2Fother" }, NOW);
    expect(moved).toEqual({ ok: false, reason: "its row key is not its pool and ip configuration" });
    const bad = decodeDeclaration({ ...stored(), state: "maybe" }, NOW);
    expect(bad.ok === false && bad.reason).toMatch(/^state: /);
  });

  it("reads a row stored before callers were recorded as a key holder's, by someone unknown", () => {
    const { declaredById: _i, declaredByName: _n, declaredVia: _v, ...old } = stored();
    const decoded = decodeDeclaration(old, NOW);
    expect(decoded.ok && decoded.declaration.declaredBy).toEqual({ id: "unknown", name: "unknown", via: "key" });
  });

  it("counts failed attempts up, and back to none once applied, clearing the earlier outcome's columns", () => {
    const d = decodeDeclaration(stored(), NOW);
    if (!d.ok) throw new Error(d.reason);
    const failed = outcomeUpdate({ ...d.declaration, attempts: 2 }, { kind: "failed", at: AT, reason: "429" });
    expect(failed).toMatchObject({ attempts: 3, outcomeKind: "failed", outcomeReason: "429" });
    const applied = outcomeUpdate({ ...d.declaration, attempts: 3 }, { kind: "applied", at: AT });
    expect(applied).toMatchObject({ attempts: 0, outcomeReason: "", retryAt: "", appliedVia: "" });
  });

  it("lets a stored declaration outrank an older delivery, unless its time lies beyond what intake accepts", () => {
    const later = { declaredAt: "2026-12-02T10:05:00.000Z" };
    expect(outranks(later, declaration, NOW)).toBe(true);
    expect(outranks(declaration, later, NOW)).toBe(false);
    expect(outranks({ declaredAt: "2027-12-02T10:00:00.000Z" }, declaration, NOW)).toBe(false);
  });
});
