import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { decodeModel, encodeModel, MAX_CHUNKS, MAX_STRING_CHARS, ModelTooLargeError } from "../../src/azure/modelCodec";

/** A model of about `n` characters of JSON that gzip cannot shrink much (random hex). */
const bulky = (n: number) => ({ blob: randomBytes(Math.ceil(n / 2)).toString("hex") });

describe("modelCodec", () => {
  it("keeps a small model as one JSON string, read back as it was", () => {
    const model = { id: "nic-0", ipConfigurations: [{ name: "ipconfig1" }] };
    const encoded = encodeModel(model);
    expect(encoded).toEqual({ model: JSON.stringify(model), modelChunks: 0 });
    expect(decodeModel(encoded)).toEqual(model);
  });

  it("splits a model past one string property into gzip chunks, read back whole", () => {
    const model = bulky(10 * MAX_STRING_CHARS);
    const encoded = encodeModel(model);
    expect(encoded.model).toBe("");
    expect(Number(encoded.modelChunks)).toBeGreaterThan(1);
    expect(decodeModel(encoded)).toEqual(model);
  });

  it("refuses a model too large for one entity instead of truncating it", () => {
    expect(() => encodeModel(bulky(2 * 1024 * 1024))).toThrow(ModelTooLargeError);
  });

  it("reads a torn row (a chunk missing) as a miss, never as half a model, and an empty row as none", () => {
    const encoded = encodeModel(bulky(10 * MAX_STRING_CHARS));
    delete encoded["model_1"];
    expect(decodeModel(encoded)).toBeUndefined();
    expect(decodeModel({})).toBeUndefined();
  });

  it("refuses a row claiming more chunks than an entity can hold, naming modelChunks", () => {
    expect(() => decodeModel({ model: "", modelChunks: MAX_CHUNKS + 1 })).toThrow(/modelChunks/);
    expect(() => decodeModel({ model: "", modelChunks: -1 })).toThrow(/modelChunks/);
  });
});
