// `adminState` on a load balancer backend address, by Network api-version, as Microsoft.Network's loadBalancer.json in
// Azure/azure-rest-api-specs declares it (the table with sources is in sim/README.md): absent before 2022-01-01;
// `None`, `Up`, `Down`, `Drain` from 2022-01-01 to 2022-09-01; `None`, `Up`, `Down` from 2022-11-01 on (Drain removed,
// which the Go and .NET SDKs record as a breaking change).
import { ArmError } from "./errors";

export const ADMIN_STATE_SINCE = "2022-01-01";
const DRAIN_UNTIL = "2022-09-01";
const WITH_DRAIN = ["None", "Up", "Down", "Drain"] as const;
const WITHOUT_DRAIN = ["None", "Up", "Down"] as const;

/** The date part of an api-version (`2024-07-01-preview` → `2024-07-01`). */
function dateOf(apiVersion: string): string {
  return apiVersion.slice(0, 10);
}

/** The values `adminState` takes at this api-version; undefined where the property does not exist. */
export function adminStatesAt(apiVersion: string): readonly string[] | undefined {
  const d = dateOf(apiVersion);
  if (d < ADMIN_STATE_SINCE) return undefined;
  return d <= DRAIN_UNTIL ? WITH_DRAIN : WITHOUT_DRAIN;
}

/**
 * The value to store for an address's `adminState`, in canonical casing (the docs' PowerShell sends "DOWN"; NRP's
 * enums are modelAsString). Undefined when absent, or when the api-version has no such property (an RP ignores a
 * property its api-version does not define). A value the api-version does not list is refused, naming the field.
 */
export function acceptAdminState(value: unknown, apiVersion: string, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  const allowed = adminStatesAt(apiVersion);
  if (!allowed) return undefined;
  const match = typeof value === "string" ? allowed.find((v) => v.toLowerCase() === value.toLowerCase()) : undefined;
  if (match) return match;
  // NRP's code for an unparseable body (terraform-provider-azurerm issue 7691); the detail's code and text are chosen.
  throw new ArmError(400, {
    error: {
      code: "InvalidRequestFormat",
      message: "Cannot parse the request.",
      details: [
        {
          code: "InvalidLoadBalancerBackendAddressAdminState",
          message: `Value ${JSON.stringify(value)} of ${field} is not one of ${allowed.join(", ")} at api-version ${apiVersion}.`,
        },
      ],
    },
  });
}
