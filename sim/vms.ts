// Virtual machines as Compute RP answers them when they are top-level resources: the VMs of a Flexible scale set
// (`properties.virtualMachineScaleSet.id`) and standalone VMs. Their NICs are Network RP resources (nics.ts): on
// scale-out a Flexible scale set builds each new VM's NICs from its model; existing VMs never follow the model.
import { randomUUID } from "node:crypto";
import { badRequest, type ArmError } from "./errors";
import type { Writer } from "./events";
import { canonical, networkInterfaceId, virtualMachineId, VM_TYPE } from "./ids";
import { deepEqual, getPath, isJsonObject, type Json, type JsonObject } from "./json";
import { newWeakEtag, nextMacAddress } from "./nics";
import { capacityOf, modelNicConfigs, profileWithoutNetwork } from "./scaleSets";
import type { NicRecord, ScaleSetRecord, SimState, VmRecord } from "./state";

export type { VmRecord } from "./state";

export const OP_VM_DELETE = "Microsoft.Compute/virtualMachines/delete";

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

/** A VM as GET answers it; `listed`: as a LIST item, whose NIC references carry no properties (recorded). A VM that
 *  does not show its NIC configurations answers only its NIC references (its own copy stays, for CRP's rollouts). */
export function renderVm(vm: VmRecord, listed = false): JsonObject {
  const props = getPath(vm.body, "properties");
  const ownNetwork = vm.showsNicConfigurations ? getPath(vm.body, "properties", "networkProfile") : undefined;
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
      // A Flexible VM carries its own networkApiVersion and NIC configurations, from which CRP built its NICs.
      networkProfile: {
        ...(isJsonObject(ownNetwork) ? structuredClone(ownNetwork) : {}),
        networkInterfaces: vm.nicIds.map((id, i): JsonObject =>
          listed || vm.primaryIndex < 0
            ? { id }
            : { id, properties: { primary: i === vm.primaryIndex, deleteOption: "Delete" } },
        ),
      },
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
  const address = v6
    ? `fd00::${addressCounter.toString(16)}`
    : `10.1.${(addressCounter >> 8) & 0xff}.${addressCounter & 0xff}`;
  return {
    name: ipc["name"] ?? "ipconfig1",
    properties: { ...props, privateIPAllocationMethod: "Dynamic", privateIPAddress: address },
  };
}

/** A NIC resource built from a NIC configuration (the VMSS model's shape, or a seed's). */
export function newNic(
  host: VmHost,
  vm: Pick<VmRecord, "id" | "subscriptionId" | "resourceGroup" | "location">,
  name: string,
  config: Json,
  primary?: boolean,
  resourceGroup = vm.resourceGroup,
): NicRecord {
  const p = getPath(config, "properties");
  const props = isJsonObject(p) ? p : {};
  const ipcs = Array.isArray(props["ipConfigurations"]) ? props["ipConfigurations"] : [];
  const nic: NicRecord = {
    id: networkInterfaceId(vm.subscriptionId, resourceGroup, name),
    subscriptionId: vm.subscriptionId,
    resourceGroup,
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
    ...(primary !== undefined ? { primary } : {}),
    provisioningState: "Succeeded",
  };
  host.state.nics.set(canonical(nic.id), nic);
  return nic;
}

/**
 * Flexible VMs are named `<scale set>_<8 hex digits>`; here the digits count up, so names are reproducible. Their NICs
 * are not named after them (cloud-provider-azure issues 2670 and 4823: a NIC's VM is `virtualMachine.id`, never its
 * name): `<scale set>-<8 other hex digits>-nic<n>`, the digits scrambled from the ordinal so no name can be derived.
 */
function newFlexVm(host: VmHost, ss: ScaleSetRecord, ordinal: number): VmRecord {
  const name = `${ss.name}_${ordinal.toString(16).padStart(8, "0")}`;
  const nicStem = `${ss.name}-${(Math.imul(ordinal + 1, 0x9e3779b1) >>> 0).toString(16).padStart(8, "0")}`;
  const network = getPath(ss.body, "properties", "virtualMachineProfile", "networkProfile");
  const vm: VmRecord = {
    id: virtualMachineId(ss.subscriptionId, ss.resourceGroup, name),
    subscriptionId: ss.subscriptionId,
    resourceGroup: ss.resourceGroup,
    name,
    location: ss.location,
    body: {
      properties: {
        hardwareProfile: { vmSize: String(getPath(ss.body, "sku", "name") ?? "Standard_D2s_v3") },
        ...profileWithoutNetwork(ss.body),
        // The VM's own copy of the model's network profile: CRP builds (and, rolling, rebuilds) its NICs from it.
        networkProfile: {
          networkApiVersion: String(getPath(network, "networkApiVersion") ?? "2020-11-01"),
          networkInterfaceConfigurations: structuredClone(modelNicConfigs(ss.body)),
        },
      },
    },
    scaleSetId: ss.id,
    nicIds: [],
    primaryIndex: -1,
    showsNicConfigurations:
      ss.vmNetworkProfile === "nicReferences"
        ? false
        : ss.vmNetworkProfile === "alternating"
          ? ordinal % 2 === 0
          : true,
    etag: 1,
    vmId: randomUUID(),
    timeCreated: host.clock.nowIso(),
    provisioningState: "Creating",
    deleting: false,
  };
  const configs = modelNicConfigs(ss.body);
  vm.primaryIndex = primaryOfConfigs(configs);
  vm.nicIds = configs.map((c, i) => newNic(host, vm, `${nicStem}-nic${i}`, c, vm.primaryIndex === i).id);
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

/** The flagged NIC configuration, else the only one (-1: none can be told). */
function primaryOfConfigs(configs: Json[]): number {
  const flagged = configs.findIndex((c) => getPath(c, "properties", "primary") === true);
  return flagged >= 0 ? flagged : configs.length === 1 ? 0 : -1;
}

/** The VM's own NIC configurations are the model's. */
export function flexVmFollowsModel(ss: ScaleSetRecord, vm: VmRecord): boolean {
  return deepEqual(
    getPath(vm.body, "properties", "networkProfile", "networkInterfaceConfigurations"),
    modelNicConfigs(ss.body),
  );
}

/**
 * upgradePolicy Automatic or Rolling on a Flexible scale set, with `flexibleUpgradeRollsNetwork`: the VM takes the
 * model's NIC configurations and CRP rewrites its NICs' pool references from them (matched by position: the NIC
 * built from each configuration). True if anything changed. Whether CRP does this is not public: a setting.
 */
export function rollFlexVm(ss: ScaleSetRecord, vm: VmRecord, state: SimState): boolean {
  if (flexVmFollowsModel(ss, vm)) return false;
  const configs = modelNicConfigs(ss.body);
  const props = vm.body["properties"];
  if (isJsonObject(props)) {
    const network = isJsonObject(props["networkProfile"]) ? props["networkProfile"] : {};
    props["networkProfile"] = { ...network, networkInterfaceConfigurations: structuredClone(configs) };
  }
  vm.etag++;
  vm.nicIds.forEach((nicId, i) => {
    const nic = state.nics.get(canonical(nicId));
    const ipcs = getPath(configs[i], "properties", "ipConfigurations");
    const current = getPath(nic?.body, "properties", "ipConfigurations");
    if (!nic || !Array.isArray(ipcs) || !Array.isArray(current)) return;
    const pools = (name: Json | undefined) =>
      getPath(
        ipcs.find((c) => getPath(c, "name") === name),
        "properties",
        "loadBalancerBackendAddressPools",
      );
    const next = current.map((c) => {
      if (!isJsonObject(c) || !isJsonObject(c["properties"])) return c;
      const p = { ...c["properties"] };
      const want = pools(c["name"]);
      if (Array.isArray(want) && want.length > 0) p["loadBalancerBackendAddressPools"] = structuredClone(want);
      else delete p["loadBalancerBackendAddressPools"];
      return { ...c, properties: p };
    });
    if (deepEqual(next, current)) return;
    nic.body = {
      ...nic.body,
      properties: { ...(isJsonObject(nic.body["properties"]) ? nic.body["properties"] : {}), ipConfigurations: next },
    };
    nic.etag = newWeakEtag();
  });
  return true;
}

/** A seeded scale set's VMs exist already. */
export function settleFlexVms(state: SimState, ss: ScaleSetRecord): void {
  for (const vm of vmsOfScaleSet(state, ss.id))
    if (vm.provisioningState === "Creating") vm.provisioningState = "Succeeded";
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
export function addStandaloneVm(
  host: VmHost,
  sub: string,
  rg: string,
  location: string,
  name: string,
  nics: { name: string; config: Json; resourceGroup?: string }[],
  networkProfile: "nicConfigurations" | "nicReferences" = "nicReferences",
): VmRecord {
  const vm: VmRecord = {
    id: virtualMachineId(sub, rg, name),
    subscriptionId: sub,
    resourceGroup: rg,
    name,
    location,
    body: {
      properties: {
        hardwareProfile: { vmSize: "Standard_D2s_v3" },
        osProfile: { computerName: name, adminUsername: "azureuser" },
        // The NICs' configurations, as a VM whose NICs CRP built carries them (shown when the seed says so).
        networkProfile: {
          networkApiVersion: "2020-11-01",
          networkInterfaceConfigurations: nics.map((n) => structuredClone(n.config)),
        },
      },
    },
    nicIds: [],
    primaryIndex: -1,
    showsNicConfigurations: networkProfile === "nicConfigurations",
    etag: 1,
    vmId: randomUUID(),
    timeCreated: host.clock.nowIso(),
    provisioningState: "Succeeded",
    deleting: false,
  };
  // The seed's primary flag, or the only NIC; several unflagged NICs leave the VM without one (a test of clients).
  vm.primaryIndex = primaryOfConfigs(nics.map((n) => n.config));
  vm.nicIds = nics.map(
    (n, i) =>
      newNic(host, vm, n.name, n.config, vm.primaryIndex < 0 ? undefined : vm.primaryIndex === i, n.resourceGroup).id,
  );
  host.state.vms.set(canonical(vm.id), vm);
  return vm;
}
