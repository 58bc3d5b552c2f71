// What ARM knows of a request before any resource provider sees it: the resource type the path names, the
// api-versions that type registers (anything else is refused here, for every route, the ones added later too), which
// provider answers it, the region whose Network RP budget a request NRP answers spends, and the name NRP gives the
// operation.
import {
  COMPUTE_API_VERSIONS,
  isWellFormedApiVersion,
  NETWORK_API_VERSIONS,
  VMSS_NIC_API_VERSIONS,
} from "../apiVersions";
import type { Engine } from "../engine";
import { invalidApiVersion, noRegisteredProvider, type ArmError } from "../errors";
import { parseResourcePath } from "../ids";
import type { NetworkBucketKind } from "../throttle";

const VERSIONS: Record<string, readonly string[]> = {
  "microsoft.compute": COMPUTE_API_VERSIONS,
  "microsoft.network": NETWORK_API_VERSIONS,
};

/** Types a namespace registers at versions of their own, and the provider that answers them: a Uniform scale set's
 *  NICs sit under Microsoft.Compute, NRP answers them (and counts them against its budget). */
const OWN_REGISTRATIONS: { namespace: string; type: RegExp; versions: readonly string[]; servedBy: Namespace }[] = [
  {
    namespace: "microsoft.compute",
    type: /^virtualmachinescalesets(\/virtualmachines)?\/networkinterfaces(\/ipconfigurations)?$/i,
    versions: VMSS_NIC_API_VERSIONS,
    servedBy: "microsoft.network",
  },
];

/** Actions after a resource's name are not resource types of their own. */
const ACTIONS = new Set(["manualupgrade"]);

type Namespace = "microsoft.compute" | "microsoft.network";

export interface Registration {
  namespace: Namespace;
  /** `virtualMachineScaleSets/virtualMachines`, `networkInterfaces`, `loadBalancers/backendAddressPools`,
   *  `applicationGateways`, `locations/operations`, … */
  type: string;
  /** The api-versions ARM routes for the type. */
  versions: readonly string[];
  /** The resource provider that answers the type. */
  servedBy: Namespace;
  /** The region the request is served in: the resource group's, or the one the path names. */
  location: string;
  subscriptionId: string;
}

export function registrationOf(engine: Engine, pathname: string): Registration | undefined {
  const p = parseResourcePath(pathname);
  const ns = p?.providerSegments[0]?.toLowerCase();
  if (!p || (ns !== "microsoft.compute" && ns !== "microsoft.network")) return undefined;
  const segs = p.providerSegments.slice(1);
  const types: string[] = [];
  for (let i = 0; i < segs.length; i += 2) {
    const t = segs[i] as string;
    if (i > 0 && i === segs.length - 1 && ACTIONS.has(t.toLowerCase())) break;
    types.push(t);
  }
  const inPath = segs[0]?.toLowerCase() === "locations" ? segs[1] : undefined;
  const rg = p.resourceGroup !== undefined ? engine.state.resourceGroup(p.subscriptionId, p.resourceGroup) : undefined;
  const type = types.join("/");
  const own = OWN_REGISTRATIONS.find((r) => r.namespace === ns && r.type.test(type));
  return {
    namespace: ns,
    type,
    versions: own?.versions ?? VERSIONS[ns] ?? [],
    servedBy: own?.servedBy ?? ns,
    location: (inPath ?? rg?.location ?? "").toLowerCase(),
    subscriptionId: p.subscriptionId,
  };
}

/** ARM's refusal of an api-version: no date at all, or a date the type does not register. */
export function apiVersionError(engine: Engine, reg: Registration, apiVersion: string): ArmError | undefined {
  const versions = reg.versions;
  if (!isWellFormedApiVersion(apiVersion)) return invalidApiVersion(apiVersion, versions);
  if (versions.includes(apiVersion.toLowerCase())) return undefined;
  const locations = [...new Set(engine.state.locations())];
  return noRegisteredProvider(apiVersion, reg.type, reg.location, versions, locations);
}

/** The budget of a request NRP answers: NRP counts reads and writes (deletes with them) per subscription and region. */
export function networkBudgetOf(
  reg: Registration,
  method: string,
): { kind: NetworkBucketKind; regionKey: string; operation: string } | undefined {
  if (reg.servedBy !== "microsoft.network") return undefined;
  const kind: NetworkBucketKind = method === "GET" ? "reads" : "writes";
  const last = reg.type.split("/").pop() ?? "";
  const noun = last.charAt(0).toUpperCase() + last.slice(1).replace(/s$/, "");
  const verb = method === "GET" ? "Get" : method === "DELETE" ? "Delete" : "Put";
  return {
    kind,
    regionKey: `${reg.subscriptionId.toLowerCase()}|${reg.location}`,
    operation: `${verb}${noun}Operation`,
  };
}
