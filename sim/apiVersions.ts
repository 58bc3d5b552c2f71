// The Compute api-versions ARM accepts for scale sets and their VMs, and which of them carry ETags. ARM refuses any
// other value before the request reaches CRP; ETags (and If-Match) on scale sets and their VMs exist only from
// 2023-09-01 (azure-rest-api-specs PR 26368): an older version answers without them and ignores If-Match.

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

/** The first api-version whose scale set and VM answers carry an ETag and whose writes honour If-Match. */
export const FIRST_ETAG_API_VERSION = "2023-09-01";

export function isKnownComputeApiVersion(v: string): boolean {
  return COMPUTE_API_VERSIONS.includes(v.toLowerCase());
}

/** Dates compare as strings; a preview suffix does not change the date. */
export function carriesEtags(v: string): boolean {
  return v.slice(0, 10) >= FIRST_ETAG_API_VERSION;
}
