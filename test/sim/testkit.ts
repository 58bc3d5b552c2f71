// Helpers shared by the simulator's own tests: plain-HTTP ARM calls and the demo's IDs.
import { DEMO_SUBSCRIPTION } from "../../sim/seed";

export const SUB = DEMO_SUBSCRIPTION;
export const RG_PATH = `/subscriptions/${SUB}/resourceGroups/etag`;
export const VMSS_PATH = `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-0`;
export const LB_PATH = `${RG_PATH}/providers/Microsoft.Network/loadBalancers/etag-k8s`;
export const POOL_ID = `${LB_PATH}/backendAddressPools/etag-k8s`;
export const SUBNET_ID = `${RG_PATH}/providers/Microsoft.Network/virtualNetworks/etag-k8s-vnet/subnets/node-subnet`;
export const API = "api-version=2026-03-01";
/** Network RP registers its own versions (2026-01-01: @azure/arm-network 39's); ARM refuses a Compute one there. */
export const NETWORK_API = "api-version=2026-01-01";

export interface ArmResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
}

export async function arm(
  base: string,
  method: string,
  pathAndQuery: string,
  opts: { body?: unknown; rawBody?: string; headers?: Record<string, string>; token?: string | null } = {},
): Promise<ArmResponse> {
  const url = pathAndQuery.startsWith("http")
    ? pathAndQuery
    : `${base}${pathAndQuery}${pathAndQuery.includes("?") ? "&" : "?"}${/\/providers\/Microsoft\.Network\//i.test(pathAndQuery) ? NETWORK_API : API}`;
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== null) headers["authorization"] = `Bearer ${opts.token ?? "t"}`;
  const body = opts.rawBody ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined);
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as unknown) : undefined, text };
}

/** The NIC configurations of a rendered scale set. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function nicsOf(vmss: any): any[] {
  return vmss.properties.virtualMachineProfile.networkProfile.networkInterfaceConfigurations;
}

export function ipConfig(name: string, pools: string[] = []): unknown {
  return {
    name,
    properties: {
      primary: false,
      privateIPAddressVersion: "IPv4",
      subnet: { id: SUBNET_ID },
      ...(pools.length ? { loadBalancerBackendAddressPools: pools.map((id) => ({ id })) } : {}),
    },
  };
}

/** An instance PUT body that changes the instance (CRP drops tags sent on an instance, so they change nothing). */
export function instanceChange(value: string, location = "eastus2"): unknown {
  return { location, properties: { userData: Buffer.from(value).toString("base64") } };
}
