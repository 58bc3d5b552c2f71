// ARM's lenient JSON and CRP's merge rules, on their own.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { deepEqual, parseArmJson } from "../../sim/json";
import { mergeArm, withoutReadOnly } from "../../sim/merge";

describe("parseArmJson", () => {
  it("accepts a trailing comma before ] or }, but not inside strings", () => {
    expect(parseArmJson('{"a": [1, 2, ], "b": {"c": ",}", }, }')).toEqual({ a: [1, 2], b: { c: ",}" } });
    expect(parseArmJson('{"s": "x\\",]"}')).toEqual({ s: 'x",]' });
    expect(() => parseArmJson('{"a": 1,,}')).toThrow(SyntaxError);
  });

  it("reads what JSON.stringify writes", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => deepEqual(parseArmJson(JSON.stringify(v)), JSON.parse(JSON.stringify(v)))),
    );
  });
});

describe("mergeArm", () => {
  it("keeps omitted properties, merges objects, replaces arrays whole", () => {
    const stored = { a: 1, o: { x: 1, y: 2 }, arr: [{ n: 1 }, { n: 2 }] };
    expect(mergeArm(stored, { o: { y: 3 }, arr: [{ n: 9 }] })).toEqual({ a: 1, o: { x: 1, y: 3 }, arr: [{ n: 9 }] });
    expect(stored.o.y).toBe(2); // the stored value is not touched
  });

  it("drops read-only paths", () => {
    expect(
      withoutReadOnly({ id: "x", properties: { provisioningState: "p", keep: 1 } }, [
        ["id"],
        ["properties", "provisioningState"],
      ]),
    ).toEqual({
      properties: { keep: 1 },
    });
  });
});
