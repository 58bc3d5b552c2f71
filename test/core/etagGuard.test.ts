import { describe, expect, it } from "vitest";
import { MissingEtagError, requireEtag } from "../../src/core/etagGuard";

const VMSS =
  "/subscriptions/0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/a";

describe("ETag guard", () => {
  it("hands back a usable ETag as the If-Match value", () => {
    expect(requireEtag(VMSS, 'W/"7"')).toBe('W/"7"');
  });

  it.each([undefined, "", "  "])(
    "refuses to write without an ETag (%j), naming the resource, not to be retried",
    (etag) => {
      let caught: unknown;
      try {
        requireEtag(VMSS, etag);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(MissingEtagError);
      expect((caught as MissingEtagError).retriable).toBe(false);
      expect((caught as MissingEtagError).resourceId).toBe(VMSS);
      expect((caught as Error).message).toContain(`no ETag for ${VMSS}`);
    },
  );
});
