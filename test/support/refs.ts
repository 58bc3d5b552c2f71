import type { ScaleSetModel } from "../../src/core/models";
import {
  parseInstanceId,
  parseNicId,
  parseScaleSetId,
  type InstanceRef,
  type NicRef,
  type ScaleSetRef,
} from "../../src/core/resourceIds";

/** Parsed refs of IDs a test made up itself; a bad one is a bug in the test. */
export function scaleSetRef(id: string): ScaleSetRef {
  const r = parseScaleSetId(id);
  if (!r.ok) throw new Error(`test bug: ${id} ${r.reason}`);
  return r.value;
}

export function instanceRefOf(id: string): InstanceRef {
  const r = parseInstanceId(id);
  if (!r.ok) throw new Error(`test bug: ${id} ${r.reason}`);
  return r.value;
}

/** A scale set's model with no NICs, as a cache row of a test's own holds it. */
export function bareModel(id: string, etag = "W/1"): ScaleSetModel {
  return { id, etag, location: "westeurope", provisioningState: "Succeeded", capacity: 1, nics: [] };
}

export function nicRefOf(id: string): NicRef {
  const r = parseNicId(id);
  if (!r.ok) throw new Error(`test bug: ${id} ${r.reason}`);
  return r.value;
}
