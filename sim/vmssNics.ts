// A Uniform scale set instance's network interfaces as the Network RP shows them (NRP's virtual machine scale set
// network interface API, read-only): each NIC configuration of the instance becomes a NIC
// `.../virtualMachineScaleSets/{ss}/virtualMachines/{i}/networkInterfaces/{nic}` whose ip configurations carry a
// private address. This is where a client reads an instance's private IP addresses (what an IP-based pool lists).
// Shape: the spec's example VmssNetworkInterfaceGet.json (2024-07-01), which has no etag.
import { getPath, isJsonObject, type Json, type JsonObject } from "./json";
import { canonical } from "./ids";
import { findNatPool } from "./lbModel";
import { nicIpConfigs } from "./nics";
import { referencedIds } from "./poolReferenceIds";
import { instanceNicConfigs, ipConfigurations } from "./scaleSets";
import type { InstanceRecord, ScaleSetRecord, SimState } from "./state";

/** Addresses handed out, per simulator state: an instance keeps its address per `nic/ipConfiguration` for life. */
const assigned = new WeakMap<SimState, WeakMap<InstanceRecord, Map<string, string>>>();

function assignedOf(state: SimState): WeakMap<InstanceRecord, Map<string, string>> {
  let m = assigned.get(state);
  if (!m) {
    m = new WeakMap();
    assigned.set(state, m);
  }
  return m;
}

/** Every private address in use now: live instances' (as assigned), NIC resources'. */
function addressesInUse(state: SimState): Set<string> {
  const used = new Set<string>();
  const byInstance = assignedOf(state);
  for (const ss of state.scaleSets.values())
    for (const inst of ss.instances.values()) for (const a of byInstance.get(inst)?.values() ?? []) used.add(a);
  for (const nic of state.nics.values())
    for (const ipc of nicIpConfigs(nic.body)) {
      const a = getPath(ipc, "properties", "privateIPAddress");
      if (typeof a === "string") used.add(a.toLowerCase());
    }
  return used;
}

/** The lowest free address of the subnet's prefix from .4 on (Azure keeps the first four of a subnet); IPv6 from
 *  `fd00:<n>::4` when the subnet has no IPv6 prefix. Which free address NRP picks is not public. */
function freeAddress(state: SimState, subnetId: string | undefined, v6: boolean): string {
  const used = addressesInUse(state);
  const prefix = subnetId ? state.subnet(subnetId)?.addressPrefix : undefined;
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(prefix ?? "");
  if (!v6 && v4) {
    const base = v4.slice(1, 5).map(Number);
    const start = (((base[0] ?? 0) << 24) | ((base[1] ?? 0) << 16) | ((base[2] ?? 0) << 8) | (base[3] ?? 0)) >>> 0;
    const size = 2 ** (32 - Number(v4[5]));
    for (let host = 4; host < size - 1; host++) {
      const n = start + host;
      const a = [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join(".");
      if (!used.has(a)) return a;
    }
    throw new Error(`subnet ${subnetId ?? ""} has no free address`);
  }
  for (let host = 4; ; host++) {
    const a = v6 ? `fd00:5ca1::${host.toString(16)}` : `10.255.${host >> 8}.${host & 0xff}`;
    if (!used.has(a)) return a;
  }
}

function addressOf(state: SimState, inst: InstanceRecord, nic: string, ipc: JsonObject): string {
  const byInstance = assignedOf(state);
  let mine = byInstance.get(inst);
  if (!mine) {
    mine = new Map();
    byInstance.set(inst, mine);
  }
  const key = `${nic}/${String(ipc["name"])}`.toLowerCase();
  const known = mine.get(key);
  if (known) return known;
  const v6 = String(getPath(ipc, "properties", "privateIPAddressVersion") ?? "IPv4") === "IPv6";
  const subnet = getPath(ipc, "properties", "subnet", "id");
  const address = freeAddress(state, typeof subnet === "string" ? subnet : undefined, v6);
  mine.set(key, address);
  return address;
}

/** The NIC configurations NRP shows for the instance: those of its last ended write (as its pools do). */
const shownNics = (inst: InstanceRecord): Json[] => inst.memberNics ?? instanceNicConfigs(inst);

/** NRP's NAT rules of the instance: one per NAT pool its ip configuration references, `<pool>.<instance id>`, as
 *  the load balancer derives them (none past the pool's port range). */
function natRulesOf(state: SimState, inst: InstanceRecord, ipc: JsonObject): JsonObject[] {
  const out: JsonObject[] = [];
  for (const ref of referencedIds(ipc, "loadBalancerInboundNatPools")) {
    const m = /^(.*\/loadBalancers\/[^/]+)\/inboundNatPools\/([^/]+)$/i.exec(ref);
    const lb = m?.[1] ? state.loadBalancers.get(canonical(m[1])) : undefined;
    const pool = lb && m?.[2] ? findNatPool(lb, m[2]) : undefined;
    if (!lb || !pool) continue;
    const start = Number(getPath(pool, "properties", "frontendPortRangeStart") ?? 0);
    const end = Number(getPath(pool, "properties", "frontendPortRangeEnd") ?? start);
    if (start + Number(inst.instanceId) <= end)
      out.push({ id: `${lb.id}/inboundNatRules/${String(pool["name"])}.${inst.instanceId}` });
  }
  return out;
}

function renderIpConfiguration(state: SimState, inst: InstanceRecord, nicId: string, nic: string, ipc: JsonObject) {
  const props = isJsonObject(ipc["properties"]) ? structuredClone(ipc["properties"]) : {};
  const natRules = natRulesOf(state, inst, ipc);
  delete props["loadBalancerInboundNatPools"];
  delete props["publicIPAddressConfiguration"];
  return {
    name: ipc["name"] ?? null,
    id: `${nicId}/ipConfigurations/${String(ipc["name"])}`,
    properties: {
      provisioningState: "Succeeded",
      privateIPAddress: addressOf(state, inst, nic, ipc),
      privateIPAllocationMethod: "Dynamic",
      ...props,
      privateIPAddressVersion: props["privateIPAddressVersion"] ?? "IPv4",
      primary: props["primary"] === true,
      ...(natRules.length > 0 ? { loadBalancerInboundNatRules: natRules } : {}),
    },
  };
}

/** A stable MAC address for the NIC: Azure's 00-0D-3A prefix and three bytes of the NIC ID's hash (Azure's own
 *  assignment is not public). */
function macAddressOf(nicId: string): string {
  let h = 2166136261;
  for (const ch of nicId.toLowerCase()) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  const bytes = [(h >>> 16) & 0xff, (h >>> 8) & 0xff, h & 0xff];
  return ["00", "0D", "3A", ...bytes.map((b) => b.toString(16).toUpperCase().padStart(2, "0"))].join("-");
}

/** The instance's NICs as NRP answers them (ip configurations with their private addresses). */
export function renderInstanceNics(state: SimState, inst: InstanceRecord): JsonObject[] {
  const configs = shownNics(inst).filter(isJsonObject);
  return configs.map((config): JsonObject => {
    const name = String(config["name"]);
    const id = `${inst.id}/networkInterfaces/${name}`;
    const props = isJsonObject(config["properties"]) ? config["properties"] : {};
    const ipcs = ipConfigurations([config]).map(({ ipc }) => renderIpConfiguration(state, inst, id, name, ipc));
    return {
      name,
      id,
      properties: {
        provisioningState: "Succeeded",
        ipConfigurations: ipcs,
        dnsSettings: { dnsServers: [], appliedDnsServers: [] },
        macAddress: macAddressOf(id),
        enableAcceleratedNetworking: props["enableAcceleratedNetworking"] === true,
        enableIPForwarding: props["enableIPForwarding"] === true,
        ...(props["networkSecurityGroup"] !== undefined
          ? { networkSecurityGroup: structuredClone(props["networkSecurityGroup"]) }
          : {}),
        primary: props["primary"] === true || configs.length === 1,
        virtualMachine: { id: inst.id },
      },
    };
  });
}

/** Every live instance's NICs, in instance order (Uniform scale sets; a Flexible one has none here). */
export function renderScaleSetNics(state: SimState, ss: ScaleSetRecord): JsonObject[] {
  return [...ss.instances.values()].flatMap((inst) => renderInstanceNics(state, inst));
}
