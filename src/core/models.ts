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
  /** "Uniform" or "Flexible" as ARM answered it; absent is Uniform (older scale sets). */
  orchestrationMode?: string | undefined;
  /** Flexible only: the Network API version the model's NICs are built with; written back as read, never dropped. */
  networkApiVersion?: string | undefined;
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
  /**
   * Which VM this is: a reused instance ID gets a new vmId (see core/incarnation.ts). Undefined in rows cached before
   * it was kept.
   */
  vmId?: string | undefined;
}

export const isDeleting = (state: string | undefined) => (state ?? "").toLowerCase() === "deleting";

/** A top-level VM (standalone, or of a Flexible scale set): where its NIC resources are. */
export interface VmModel {
  id: string;
  etag: string;
  provisioningState: string | undefined;
  /** The Flexible scale set it belongs to, as ARM answered it. */
  scaleSetId: string | undefined;
  /** Its NIC resource IDs; `primaryNicId` among them. */
  nicIds: string[];
  primaryNicId: string | undefined;
  /**
   * A Flexible VM's own NIC configurations, from which CRP built its NICs: what a NIC is matched to (never its
   * name, which is not the configuration's). Absent for a VM without them (standalone).
   */
  nicConfigurations?: VmNicConfiguration[];
}

export interface VmNicConfiguration {
  name: string;
  primary: boolean | undefined;
  ipConfigurationNames: string[];
}

/**
 * A Network RP NIC as read: `nic` is the whole resource (flattened, as the Network SDK hands it over), because a
 * NIC PUT replaces the resource whole; its `ipConfigurations` have the same shape as a scale set's.
 */
export interface NicModel {
  id: string;
  etag: string;
  provisioningState: string | undefined;
  nic: NicConfiguration;
}

/** One entry of a pool's `loadBalancerBackendAddresses`, as poolsync reads and writes it (issue 43). */
export interface PoolAddress {
  name: string;
  ipAddress?: string | undefined;
  subnetId?: string | undefined;
  virtualNetworkId?: string | undefined;
  adminState?: string | undefined;
  /** NRP listed it for a NIC's ip configuration (a NIC-based pool's member): never written back by a client. */
  fromNic?: boolean;
  /** Every other field as read, written back unchanged. */
  rest?: Record<string, unknown>;
}

/** A load balancer backend pool as read: its ETag is its load balancer's (every pool write moves it). */
export interface BackendPoolModel {
  id: string;
  etag: string;
  provisioningState: string | undefined;
  /** true: IP-based (lists its addresses); false: NIC-based; undefined: nothing says yet (empty, no syncMode). */
  ipBased: boolean | undefined;
  addresses: PoolAddress[];
  /** The pool as read (flattened, as the Network SDK hands it over): a pool PUT replaces it whole. */
  pool: Record<string, unknown>;
  /**
   * An Application Gateway's pool (issue 43): its gateway as read, which is written whole (the pool has no endpoint of
   * its own); its ETag is the gateway's. Absent for a load balancer's pool.
   */
  gateway?: Record<string, unknown>;
}

/** A Uniform scale set instance's NICs as Network RP lists them, with each ip configuration's private address. */
export interface ScaleSetInstanceNics {
  instanceId: string;
  nics: NicConfiguration[];
}
