// Virtual machines as Compute RP answers them when they are top-level resources: the VMs of a Flexible scale set
// (`properties.virtualMachineScaleSet.id`) and standalone VMs. Their NICs are Network RP resources (nics.ts): on
// scale-out a Flexible scale set builds each new VM's NICs from its model; existing VMs never follow the model.
import { randomUUID } from "node:crypto";
import { badRequest, type ArmError } from "./errors";
import type { Writer } from "./events";
import { canonical, networkInterfaceId, virtualMachineId, VM_TYPE } from "./ids";
import { getPath, isJsonObject, type Json, type JsonObject } from "./json";
import { newWeakEtag, nextMacAddress, type NicRecord } from "./nics";
import { capacityOf, modelNicConfigs, profileWithoutNetwork } from "./scaleSets";
import type { ScaleSetRecord, SimState } from "./state";

export const OP_VM_DELETE = "Microsoft.Compute/virtualMachines/delete";

export interface VmRecord {
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  location: string;
  /** `{ properties: { hardwareProfile, osProfile, storageProfile } }`: what the VM was built with. */
  body: JsonObject;
  /** The Flexible scale set it belongs to, if any. */
  scaleSetId?: string;
  /** Its NICs, the primary first. */
  nicIds: string[];
  etag: number;
  vmId: string;
  timeCreated: string;
  provisioningState: string;
  deleting: boolean;
}

/** What the engine gives this module: its state, clock, settings and the events it publishes. */
export interface VmHost {
  readonly state: SimState;
  readonly settings: { operationDurationMs: number; etagBumpAfterCreate?: boolean };
  readonly clock: { nowIso(): string; after(ms: number, run: () => void): void };
  emit(kind: "Delete", outcome: "Success", resourceUri: string, operationName: string, writer: Writer): void;
}

export function isFlexible(model: JsonObject): boolean {
  return String(getPath(model, "properties", "orchestrationMode") ?? "").toLowerCase() === "flexible";
}

/** A Flexible model with NIC configurations must say which Network API version builds the NICs (CRP answers 400). */
export function flexModelError(id: string, model: JsonObject): ArmError | undefined {
  if (!isFlexible(model) || modelNicConfigs(model).length === 0) return undefined;
  const v = getPath(model, "properties", "virtualMachineProfile", "networkProfile", "networkApiVersion");
  if (typeof v === "string" && v.length > 0) return undefined;
  return badRequest(
    "NetworkApiVersionMustBeSpecifiedWithNetworkInterfaceConfigurations",
    `Network api version in network profile of virtual machine scale set ${id} must be specified if network interface configurations are specified.`,
  );
}

export function renderVm(vm: VmRecord): JsonObject {
  const props = getPath(vm.body, "properties");
  return {
    id: vm.id,
    name: vm.name,
    type: VM_TYPE,
    location: vm.location,
    etag: `"${vm.etag}"`,
    properties: {
      ...(isJsonObject(props) ? structuredClone(props) : {}),
      vmId: vm.vmId,
      ...(vm.scaleSetId ? { virtualMachineScaleSet: { id: vm.scaleSetId } } : {}),
      networkProfile: { networkInterfaces: vm.nicIds.map((id, i) => ({ id, properties: { primary: i === 0, deleteOption: "Delete" } })) },
      provisioningState: vm.provisioningState,
      timeCreated: vm.timeCreated,
    },
  };
}

export function vmsOfScaleSet(state: SimState, scaleSetId: string): VmRecord[] {
  const key = canonical(scaleSetId);
  return [...state.vms.values()].filter((v) => v.scaleSetId !== undefined && canonical(v.scaleSetId) === key);
}

let addressCounter = 0;
/** The NIC ip configuration a VMSS NIC configuration's ip configuration becomes, with an address of its version. */
function nicIpConfigurationFrom(ipc: Json): Json {
  if (!isJsonObject(ipc)) return ipc;
  const props = isJsonObject(ipc["properties"]) ? structuredClone(ipc["properties"]) : {};
  delete props["loadBalancerInboundNatPools"];
  delete props["publicIPAddressConfiguration"];
  addressCounter++;
  const v6 = String(props["privateIPAddressVersion"] ?? "IPv4") === "IPv6";
  const address = v6 ? `fd00::${addressCounter.toString(16)}` : `10.1.${(addressCounter >> 8) & 0xff}.${addressCounter & 0xff}`;
  return { name: ipc["name"] ?? "ipconfig1", properties: { ...props, privateIPAllocationMethod: "Dynamic", privateIPAddress: address } };
}

/** A NIC resource built from a NIC configuration (the VMSS model's shape, or a seed's). */
export function newNic(host: VmHost, vm: Pick<VmRecord, "id" | "subscriptionId" | "resourceGroup" | "location">, name: string, config: Json): NicRecord {
  const p = getPath(config, "properties");
  const props = isJsonObject(p) ? p : {};
  const ipcs = Array.isArray(props["ipConfigurations"]) ? props["ipConfigurations"] : [];
  const nic: NicRecord = {
    id: networkInterfaceId(vm.subscriptionId, vm.resourceGroup, name),
    subscriptionId: vm.subscriptionId,
    resourceGroup: vm.resourceGroup,
    name,
    location: vm.location,
    body: {
      properties: {
        enableAcceleratedNetworking: props["enableAcceleratedNetworking"] ?? false,
        enableIPForwarding: props["enableIPForwarding"] ?? false,
        ipConfigurations: ipcs.map(nicIpConfigurationFrom),
      },
    },
    etag: newWeakEtag(),
    resourceGuid: randomUUID(),
    macAddress: nextMacAddress(),
    virtualMachineId: vm.id,
    provisioningState: "Succeeded",
  };
  host.state.nics.set(canonical(nic.id), nic);
  return nic;
}

/** Flexible VMs are named `<scale set>_<8 hex digits>`; here the digits count up, so names are reproducible. */
function newFlexVm(host: VmHost, ss: ScaleSetRecord, ordinal: number): VmRecord {
  const name = `${ss.name}_${ordinal.toString(16).padStart(8, "0")}`;
  const vm: VmRecord = {
    id: virtualMachineId(ss.subscriptionId, ss.resourceGroup, name),
    subscriptionId: ss.subscriptionId,
    resourceGroup: ss.resourceGroup,
    name,
    location: ss.location,
    body: { properties: { hardwareProfile: { vmSize: String(getPath(ss.body, "sku", "name") ?? "Standard_D2s_v3") }, ...profileWithoutNetwork(ss.body) } },
    scaleSetId: ss.id,
    nicIds: [],
    etag: 1,
    vmId: randomUUID(),
    timeCreated: host.clock.nowIso(),
    provisioningState: "Creating",
    deleting: false,
  };
  const configs = modelNicConfigs(ss.body);
  vm.nicIds = configs.map((c, i) => newNic(host, vm, `${name}-${String(getPath(c, "name") ?? `nic${i}`)}`, c).id);
  host.state.vms.set(canonical(vm.id), vm);
  return vm;
}

/**
 * Brings a Flexible scale set's VM count to its capacity: new VMs (and their NICs) from the model as it is now,
 * the newest removed first. Creation and removal end after an operation's duration.
 */
export function reconcileFlexCapacity(host: VmHost, ss: ScaleSetRecord): void {
  const live = vmsOfScaleSet(host.state, ss.id).filter((v) => !v.deleting);
  const target = capacityOf(ss.body);
  const created: VmRecord[] = [];
  for (let n = live.length; n < target; n++) created.push(newFlexVm(host, ss, ss.nextInstanceId++));
  const removed = live.slice(target).reverse();
  for (const vm of removed) {
    vm.deleting = true;
    vm.provisioningState = "Deleting";
  }
  host.clock.after(host.settings.operationDurationMs, () => {
    for (const vm of created) {
      if (vm.provisioningState !== "Creating") continue;
      vm.provisioningState = "Succeeded";
      // CRP's own ETag move after a create (recorded "1" then "2"), announced by no event.
      if (host.settings.etagBumpAfterCreate) vm.etag++;
    }
    for (const vm of removed) removeVm(host.state, vm);
  });
}

/** A seeded scale set's VMs exist already. */
export function settleFlexVms(state: SimState, ss: ScaleSetRecord): void {
  for (const vm of vmsOfScaleSet(state, ss.id)) if (vm.provisioningState === "Creating") vm.provisioningState = "Succeeded";
}

/** The VM and the NICs it owns (deleteOption Delete) are gone. */
export function removeVm(state: SimState, vm: VmRecord): void {
  if (state.vms.get(canonical(vm.id)) !== vm) return;
  state.vms.delete(canonical(vm.id));
  for (const nic of vm.nicIds) state.nics.delete(canonical(nic));
}

/** Deletes a VM as another writer: Deleting at once, gone after an operation's duration, then the event. */
export function deleteVmAs(host: VmHost, vm: VmRecord, writer: Writer): void {
  vm.deleting = true;
  vm.provisioningState = "Deleting";
  host.clock.after(host.settings.operationDurationMs, () => {
    removeVm(host.state, vm);
    host.emit("Delete", "Success", vm.id, OP_VM_DELETE, writer);
  });
}

/** A standalone VM with the given NICs (seed shape: NIC resource names and NIC configurations). */
export function addStandaloneVm(host: VmHost, sub: string, rg: string, location: string, name: string, nics: { name: string; config: Json }[]): VmRecord {
  const vm: VmRecord = {
    id: virtualMachineId(sub, rg, name),
    subscriptionId: sub,
    resourceGroup: rg,
    name,
    location,
    body: { properties: { hardwareProfile: { vmSize: "Standard_D2s_v3" }, osProfile: { computerName: name, adminUsername: "azureuser" } } },
    nicIds: [],
    etag: 1,
    vmId: randomUUID(),
    timeCreated: host.clock.nowIso(),
    provisioningState: "Succeeded",
    deleting: false,
  };
  vm.nicIds = nics.map((n) => newNic(host, vm, n.name, n.config).id);
  host.state.vms.set(canonical(vm.id), vm);
  return vm;
}
