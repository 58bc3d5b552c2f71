import { ok, refuse, type Result } from "./result";

/**
 * ARM resource IDs of the three kinds poolsync touches. ARM IDs are case-insensitive: `key` is the canonical
 * lower-case form used for comparison and storage keys; `id` keeps the casing we were given, for calls and display.
 */

export interface ScaleSetRef {
  kind: "scaleSet";
  id: string;
  key: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
}

export interface InstanceRef {
  kind: "instance";
  id: string;
  key: string;
  scaleSet: ScaleSetRef;
  instanceId: string;
}

/**
 * The kinds of pool a declaration may name, each referenced from an ip configuration by its own field (see
 * core/poolKinds.ts): a load balancer's backend pool, a load balancer's inbound NAT pool, an Application Gateway's
 * backend pool.
 */
export type PoolKind = "loadBalancerBackendPool" | "inboundNatPool" | "applicationGatewayBackendPool";

export interface BackendPoolRef {
  kind: "backendPool";
  poolKind: PoolKind;
  id: string;
  key: string;
  subscriptionId: string;
  resourceGroup: string;
  /** The load balancer's name, or the application gateway's (see `poolKind`). */
  parent: string;
  name: string;
}

/** A top-level VM: standalone, in an availability set, or one of a Flexible scale set's. */
export interface VmRef {
  kind: "vm";
  id: string;
  key: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
}

/** A Network RP network interface: where a VM's pool membership lives outside Uniform scale sets. */
export interface NicRef {
  kind: "nic";
  id: string;
  key: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
}

/** What a declaration names: a scale set (Uniform or Flexible) or a VM. Its key partitions every table. */
export type TargetRef = ScaleSetRef | VmRef;

export type ResourceRef = ScaleSetRef | InstanceRef | BackendPoolRef | VmRef | NicRef;

/** Longer input is refused before parsing; real IDs of these kinds are far shorter, and keys must stay under 1 KiB. */
export const MAX_RESOURCE_ID_LENGTH = 400;

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Resource group: letters, digits, _ ( ) - . ; must not end in a period (ARM's rules, ASCII only: see segmentsOf).
const RESOURCE_GROUP = /^[A-Za-z0-9_().-]{1,90}$/;
const SCALE_SET_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const NETWORK_NAME = /^[A-Za-z0-9_.-]{1,80}$/;
const INSTANCE_ID = /^\d{1,10}$/;
// VM names: up to 64 characters (Linux), letters, digits, _ . - (Flexible VMs are "<scale set>_<suffix>").
const VM_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

function segmentsOf(input: unknown): Result<string[]> {
  if (typeof input !== "string") return refuse("must be a string");
  if (input.length === 0) return refuse("is empty");
  if (input.length > MAX_RESOURCE_ID_LENGTH) return refuse(`is longer than ${MAX_RESOURCE_ID_LENGTH} characters`);
  if (!input.startsWith("/")) return refuse('must start with "/subscriptions/"');
  if (/[?#]/.test(input)) return refuse("must not contain a query string or fragment");
  if (/[%\\]/.test(input)) return refuse("must not contain encoded characters or backslashes");
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f\s]/.test(input)) return refuse("must not contain white space or control characters");
  // IDs are compared case-insensitively: outside ASCII, lower-casing folds unlike letters together (the Kelvin sign
  // U+212A becomes "k"), so "Microsoft.Networ\u212A" would pass for Microsoft.Network. poolsync takes ASCII IDs only.
  if (/[^\x21-\x7e]/.test(input)) return refuse("must hold only ASCII characters");
  const segments = input.slice(1).split("/");
  if (segments.some((s) => s === "")) return refuse("has an empty path segment");
  if (segments.some((s) => s === "." || s === "..")) return refuse('must not contain "." or ".." segments');
  return ok(segments);
}

function nameCheck(value: string, pattern: RegExp, what: string): string | undefined {
  if (!pattern.test(value)) return `${what} "${value}" is not a valid name`;
  if (value.endsWith(".")) return `${what} "${value}" must not end with a period`;
  return undefined;
}

function eq(a: string | undefined, b: string): boolean {
  return a !== undefined && a.toLowerCase() === b.toLowerCase();
}

interface GroupPrefix {
  subscriptionId: string;
  resourceGroup: string;
}

function groupPrefix(seg: string[]): Result<GroupPrefix> {
  if (!eq(seg[0], "subscriptions")) return refuse('must start with "/subscriptions/"');
  const subscriptionId = seg[1] ?? "";
  if (!GUID.test(subscriptionId)) return refuse(`subscription "${subscriptionId}" is not a GUID`);
  if (!eq(seg[2], "resourceGroups")) return refuse('must have "/resourceGroups/{name}" after the subscription');
  const resourceGroup = seg[3] ?? "";
  const bad = nameCheck(resourceGroup, RESOURCE_GROUP, "resource group");
  if (bad) return refuse(bad);
  if (!eq(seg[4], "providers")) return refuse('must have "/providers/" after the resource group');
  return ok({ subscriptionId, resourceGroup });
}

function scaleSetFrom(seg: string[]): Result<ScaleSetRef> {
  const prefix = groupPrefix(seg);
  if (!prefix.ok) return prefix;
  if (!eq(seg[5], "Microsoft.Compute") || !eq(seg[6], "virtualMachineScaleSets")) {
    return refuse(
      `names provider type "${seg[5] ?? ""}/${seg[6] ?? ""}", not Microsoft.Compute/virtualMachineScaleSets`,
    );
  }
  const name = seg[7] ?? "";
  const bad = nameCheck(name, SCALE_SET_NAME, "scale set");
  if (bad) return refuse(bad);
  const id = `/subscriptions/${prefix.value.subscriptionId}/resourceGroups/${prefix.value.resourceGroup}/providers/Microsoft.Compute/virtualMachineScaleSets/${name}`;
  return ok({ kind: "scaleSet", id, key: id.toLowerCase(), ...prefix.value, name });
}

export function parseScaleSetId(input: unknown): Result<ScaleSetRef> {
  const seg = segmentsOf(input);
  if (!seg.ok) return seg;
  if (seg.value.length !== 8)
    return refuse(
      "is not a scale set ID (/subscriptions/{id}/resourceGroups/{rg}/providers/Microsoft.Compute/virtualMachineScaleSets/{name})",
    );
  return scaleSetFrom(seg.value);
}

export function parseInstanceId(input: unknown): Result<InstanceRef> {
  const seg = segmentsOf(input);
  if (!seg.ok) return seg;
  if (seg.value.length !== 10 || !eq(seg.value[8], "virtualMachines")) {
    return refuse("is not a scale set VM ID (.../virtualMachineScaleSets/{name}/virtualMachines/{instanceId})");
  }
  const scaleSet = scaleSetFrom(seg.value.slice(0, 8));
  if (!scaleSet.ok) return scaleSet;
  const instanceId = seg.value[9] ?? "";
  if (!INSTANCE_ID.test(instanceId)) return refuse(`instance ID "${instanceId}" is not a number`);
  return ok(instanceRef(scaleSet.value, instanceId));
}

export function instanceRef(scaleSet: ScaleSetRef, instanceId: string): InstanceRef {
  const id = `${scaleSet.id}/virtualMachines/${instanceId}`;
  return { kind: "instance", id, key: id.toLowerCase(), scaleSet, instanceId };
}

/** The provider type and child collection of each pool kind, as its ID spells them. */
const POOL_PATHS: readonly { poolKind: PoolKind; type: string; child: string; what: string }[] = [
  { poolKind: "loadBalancerBackendPool", type: "loadBalancers", child: "backendAddressPools", what: "backend pool" },
  { poolKind: "inboundNatPool", type: "loadBalancers", child: "inboundNatPools", what: "inbound NAT pool" },
  {
    poolKind: "applicationGatewayBackendPool",
    type: "applicationGateways",
    child: "backendAddressPools",
    what: "application gateway backend pool",
  },
];

/**
 * A pool of any kind poolsync manages: `…/loadBalancers/{lb}/backendAddressPools/{pool}`,
 * `…/loadBalancers/{lb}/inboundNatPools/{pool}` or `…/applicationGateways/{agw}/backendAddressPools/{pool}`.
 */
export function parseBackendPoolId(input: unknown): Result<BackendPoolRef> {
  const seg = segmentsOf(input);
  if (!seg.ok) return seg;
  if (seg.value.length !== 10) {
    return refuse(
      "is not a pool ID (/subscriptions/{id}/resourceGroups/{rg}/providers/Microsoft.Network/loadBalancers/{lb}/backendAddressPools/{pool}, …/loadBalancers/{lb}/inboundNatPools/{pool} or …/applicationGateways/{agw}/backendAddressPools/{pool})",
    );
  }
  const prefix = groupPrefix(seg.value);
  if (!prefix.ok) return prefix;
  const s = seg.value;
  const path = eq(s[5], "Microsoft.Network")
    ? POOL_PATHS.find((p) => eq(s[6], p.type) && eq(s[8], p.child))
    : undefined;
  if (!path) {
    return refuse(
      `names "${s[5]}/${s[6]}/…/${s[8]}", not Microsoft.Network/loadBalancers/…/backendAddressPools, …/inboundNatPools or Microsoft.Network/applicationGateways/…/backendAddressPools`,
    );
  }
  const parent = s[7] ?? "";
  const name = s[9] ?? "";
  const parentWhat = path.type === "loadBalancers" ? "load balancer" : "application gateway";
  const bad = nameCheck(parent, NETWORK_NAME, parentWhat) ?? nameCheck(name, NETWORK_NAME, path.what);
  if (bad) return refuse(bad);
  const id = `/subscriptions/${prefix.value.subscriptionId}/resourceGroups/${prefix.value.resourceGroup}/providers/Microsoft.Network/${path.type}/${parent}/${path.child}/${name}`;
  return ok({ kind: "backendPool", poolKind: path.poolKind, id, key: id.toLowerCase(), ...prefix.value, parent, name });
}

/** The pool's parent resource (its load balancer or application gateway), whose ETag its writes carry. */
export function poolParentId(ref: BackendPoolRef): string {
  return ref.id.split("/").slice(0, 9).join("/");
}

/** Either kind of Compute ID an ARM event may name; anything else is refused with the reason. */
export function parseComputeId(input: unknown): Result<ScaleSetRef | InstanceRef> {
  const seg = segmentsOf(input);
  if (!seg.ok) return seg;
  return seg.value.length === 10 ? parseInstanceId(input) : parseScaleSetId(input);
}

export function sameResource(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** A `.../providers/{namespace}/{type}/{name}` ID with exactly that provider type (any casing). */
function topLevelFrom(
  input: unknown,
  namespace: string,
  type: string,
  pattern: RegExp,
  what: string,
): Result<GroupPrefix & { id: string; name: string }> {
  const seg = segmentsOf(input);
  if (!seg.ok) return seg;
  const s = seg.value;
  if (s.length !== 8)
    return refuse(
      `is not a ${what} ID (/subscriptions/{id}/resourceGroups/{rg}/providers/${namespace}/${type}/{name})`,
    );
  const prefix = groupPrefix(s);
  if (!prefix.ok) return prefix;
  if (!eq(s[5], namespace) || !eq(s[6], type))
    return refuse(`names provider type "${s[5] ?? ""}/${s[6] ?? ""}", not ${namespace}/${type}`);
  const name = s[7] ?? "";
  const bad = nameCheck(name, pattern, what);
  if (bad) return refuse(bad);
  const id = `/subscriptions/${prefix.value.subscriptionId}/resourceGroups/${prefix.value.resourceGroup}/providers/${namespace}/${type}/${name}`;
  return ok({ ...prefix.value, id, name });
}

export function parseVmId(input: unknown): Result<VmRef> {
  const r = topLevelFrom(input, "Microsoft.Compute", "virtualMachines", VM_NAME, "VM");
  return r.ok ? ok({ kind: "vm", key: r.value.id.toLowerCase(), ...r.value }) : r;
}

export function parseNicId(input: unknown): Result<NicRef> {
  const r = topLevelFrom(input, "Microsoft.Network", "networkInterfaces", NETWORK_NAME, "network interface");
  return r.ok ? ok({ kind: "nic", key: r.value.id.toLowerCase(), ...r.value }) : r;
}

/**
 * A declaration's target: a scale set or a top-level VM. A VM of a Uniform scale set
 * (`.../virtualMachineScaleSets/{name}/virtualMachines/{instanceId}`) is refused: its membership follows its scale set.
 */
export function parseTargetId(input: unknown): Result<TargetRef> {
  const seg = segmentsOf(input);
  if (!seg.ok) return seg;
  const s = seg.value;
  if (s.length === 10 && eq(s[6], "virtualMachineScaleSets") && eq(s[8], "virtualMachines")) {
    return refuse(
      "is a VM of a Uniform scale set: its pools follow its scale set, so declare the scale set (.../virtualMachineScaleSets/{name})",
    );
  }
  if (s.length === 8 && eq(s[6], "virtualMachines")) return parseVmId(input);
  if (s.length === 8 && eq(s[6], "virtualMachineScaleSets")) return parseScaleSetId(input);
  return refuse(
    "is neither a scale set ID (.../providers/Microsoft.Compute/virtualMachineScaleSets/{name}) nor a VM ID (.../providers/Microsoft.Compute/virtualMachines/{name})",
  );
}
