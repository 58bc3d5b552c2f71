// The api-versions ARM routes to Compute and Network, and which Compute ones carry ETags. ARM refuses any other value
// before the request reaches the resource provider: a value that is no date at all with InvalidApiVersionParameter,
// a date the resource type does not register with NoRegisteredProviderFound. ETags (and If-Match) on scale sets and
// their VMs exist only from 2023-09-01 (azure-rest-api-specs PR 26368): an older version answers without them and
// ignores If-Match.

/** Stable ComputeRP versions of virtualMachineScaleSet.json in azure-rest-api-specs, plus the ones @azure/arm-compute
 *  24.x and 25.x speak. Not the whole real list (previews are left out): a version missing here is refused. */
export const COMPUTE_API_VERSIONS: readonly string[] = [
  "2015-06-15",
  "2016-03-30",
  "2016-04-30-preview",
  "2017-03-30",
  "2017-12-01",
  "2018-04-01",
  "2018-06-01",
  "2018-10-01",
  "2019-03-01",
  "2019-07-01",
  "2019-12-01",
  "2020-06-01",
  "2020-12-01",
  "2021-03-01",
  "2021-04-01",
  "2021-07-01",
  "2021-11-01",
  "2022-03-01",
  "2022-08-01",
  "2022-11-01",
  "2023-03-01",
  "2023-07-01",
  "2023-09-01",
  "2024-03-01",
  "2024-07-01",
  "2024-11-01",
  "2025-04-01",
  "2026-03-01",
  "2026-04-01",
];

/**
 * Stable Microsoft.Network versions, for every Network type the simulator serves (NICs, load balancers and their
 * pools, application gateways, virtual networks, NRP's operations): the folders of azure-rest-api-specs up to
 * 2021-02-01, the versions ARM listed for `networkInterfaces` in a public NoRegisteredProviderFound answer
 * (Azure/azure-cli issue 28496), the stable folders 2025-03-01 and 2025-07-01, the recorded 2025-05-01 and the
 * 2026-01-01 @azure/arm-network 39 speaks. Not the whole real list (previews are left out).
 */
export const NETWORK_API_VERSIONS: readonly string[] = [
  "2015-06-15",
  "2016-03-30",
  "2016-06-01",
  "2016-07-01",
  "2016-08-01",
  "2016-09-01",
  "2016-10-01",
  "2016-11-01",
  "2016-12-01",
  "2017-03-01",
  "2017-04-01",
  "2017-06-01",
  "2017-08-01",
  "2017-09-01",
  "2017-10-01",
  "2017-11-01",
  "2018-01-01",
  "2018-02-01",
  "2018-03-01",
  "2018-04-01",
  "2018-05-01",
  "2018-06-01",
  "2018-07-01",
  "2018-08-01",
  "2018-10-01",
  "2018-11-01",
  "2018-12-01",
  "2019-02-01",
  "2019-04-01",
  "2019-06-01",
  "2019-07-01",
  "2019-08-01",
  "2019-09-01",
  "2019-11-01",
  "2019-12-01",
  "2020-01-01",
  "2020-03-01",
  "2020-04-01",
  "2020-05-01",
  "2020-06-01",
  "2020-07-01",
  "2020-08-01",
  "2020-11-01",
  "2021-01-01",
  "2021-02-01",
  "2021-03-01",
  "2021-05-01",
  "2021-08-01",
  "2022-01-01",
  "2022-05-01",
  "2022-07-01",
  "2022-09-01",
  "2022-11-01",
  "2023-02-01",
  "2023-04-01",
  "2023-05-01",
  "2023-06-01",
  "2023-09-01",
  "2023-11-01",
  "2024-01-01",
  "2024-03-01",
  "2024-05-01",
  "2024-07-01",
  "2024-10-01",
  "2025-01-01",
  "2025-03-01",
  "2025-05-01",
  "2025-07-01",
  "2026-01-01",
];

/**
 * NRP's view of a Uniform scale set's NICs (`virtualMachineScaleSets/networkInterfaces`,
 * `virtualMachineScaleSets/virtualMachines/networkInterfaces[/ipConfigurations]`): types under Microsoft.Compute that
 * the Network RP answers, registered at versions of their own. This is the list ARM gave in a public
 * NoRegisteredProviderFound answer for the type (Azure/azure-sdk-for-python issue 32029, 2023-08); the SDKs send
 * 2018-10-01, the one version the Network specification gives these operations. Compute versions newer than the
 * answer are not known to be registered for them, so they are refused.
 */
export const VMSS_NIC_API_VERSIONS: readonly string[] = [
  "2015-05-01-preview",
  "2015-06-15",
  "2016-03-30",
  "2016-04-30-preview",
  "2016-06-01",
  "2016-07-01",
  "2016-08-01",
  "2016-09-01",
  "2017-03-30",
  "2017-12-01",
  "2018-04-01",
  "2018-06-01",
  "2018-10-01",
  "2019-03-01",
  "2019-07-01",
  "2019-12-01",
  "2020-06-01",
  "2020-12-01",
  "2021-03-01",
  "2021-04-01",
  "2021-07-01",
  "2021-11-01",
  "2022-03-01",
  "2022-08-01",
  "2022-11-01",
  "2023-03-01",
  "2023-07-01",
];

/** The newest Network api-version the simulator knows: what a write without a request (the control API's) is taken
 *  at, and what NRP's 409 names for its operation. */
export const NEWEST_NETWORK_API_VERSION = "2026-01-01";

/** An api-version at all: a date, with an optional suffix such as -preview. */
export function isWellFormedApiVersion(v: string): boolean {
  return /^\d{4}-\d{2}-\d{2}(-[a-z0-9]+)?$/i.test(v);
}

/** The first api-version whose scale set and VM answers carry an ETag and whose writes honour If-Match. */
export const FIRST_ETAG_API_VERSION = "2023-09-01";

export function isKnownComputeApiVersion(v: string): boolean {
  return COMPUTE_API_VERSIONS.includes(v.toLowerCase());
}

/** Dates compare as strings; a preview suffix does not change the date. */
export function carriesEtags(v: string): boolean {
  return v.slice(0, 10) >= FIRST_ETAG_API_VERSION;
}
