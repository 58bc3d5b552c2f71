import type { InstanceModel, NicModel, ScaleSetModel, VmModel } from "../../src/core/models";
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

/** A scale set instance's model with no NICs, as a cache row of a test's own holds it. */
export function instanceModel(scaleSetId: string, instanceId: string): InstanceModel {
  return { ...bareModel(`${scaleSetId}/virtualMachines/${instanceId}`), instanceId };
}

/** A VM's model as a cache row of a test's own holds it: no NICs unless `fields` names them. */
export function vmModel(id: string, fields: Partial<VmModel> = {}): VmModel {
  return {
    id,
    etag: "W/1",
    provisioningState: "Succeeded",
    scaleSetId: undefined,
    nicIds: [],
    primaryNicId: undefined,
    ...fields,
  };
}

/** A NIC's model with one ip configuration, as a cache row of a test's own holds it. */
export function nicModel(id: string): NicModel {
  const name = id.slice(id.lastIndexOf("/") + 1);
  return { id, etag: "W/1", provisioningState: "Succeeded", nic: { name, ipConfigurations: [{ name: "ipconfig1" }] } };
}

export function nicRefOf(id: string): NicRef {
  const r = parseNicId(id);
  if (!r.ok) throw new Error(`test bug: ${id} ${r.reason}`);
  return r.value;
}
