import type { NicConfiguration } from "./networkProfile";

/** The part of a scale set a membership write needs, as last read from (or answered by) ARM. */
export interface ScaleSetModel {
  /** As ARM answered it (casing preserved). */
  id: string;
  etag: string;
  location: string;
  provisioningState: string | undefined;
  capacity: number | undefined;
  nics: NicConfiguration[];
  /** `upgradePolicy.mode` (Manual, Automatic, Rolling): whether CRP rolls a model change out to the instances. */
  upgradeMode?: string;
}

/** One VM of a uniform scale set: its own NIC configurations and its own ETag. */
export interface InstanceModel {
  id: string;
  instanceId: string;
  etag: string;
  location: string;
  provisioningState: string | undefined;
  /** Instances being deleted (or protected from scale-in and marked for deletion) are never written. */
  nics: NicConfiguration[];
}

export const isDeleting = (state: string | undefined) => (state ?? "").toLowerCase() === "deleting";
