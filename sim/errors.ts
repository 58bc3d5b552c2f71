// ARM error answers. Bodies follow the shapes ARM and CRP answer with where they are documented or recorded; where the
// exact CRP text is not public, the README says so.

import type { JsonObject } from "./json";

export class ArmError extends Error {
  constructor(
    readonly status: number,
    readonly body: JsonObject,
    readonly headers: Record<string, string> = {},
  ) {
    super(`${status} ${JSON.stringify(body)}`);
  }
}

export function armError(status: number, code: string, message: string, headers?: Record<string, string>): ArmError {
  return new ArmError(status, { error: { code, message } }, headers);
}

export const unauthorized = (): ArmError =>
  armError(401, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.", {
    "www-authenticate":
      'Bearer authorization_uri="https://login.windows.net/", error="invalid_token", error_description="The authentication failed because of missing \'Authorization\' header."',
  });

export const missingApiVersion = (): ArmError =>
  armError(
    400,
    "MissingApiVersionParameter",
    "The api-version query parameter (?api-version=) is required for all requests.",
  );

/**
 * ARM's answer to an api-version the resource type does not register (its wording, the supported list newest first).
 */
export const invalidApiVersion = (given: string, supported: readonly string[]): ArmError =>
  armError(
    400,
    "InvalidApiVersionParameter",
    `The api-version '${given}' is invalid. The supported versions are '${[...supported].reverse().join(",")}'.`,
  );

/**
 * ARM's answer to a well-formed api-version the resource type does not register (Azure/azure-sdk-for-python issue
 * 32029, Azure/azure-cli issue 28496: the versions oldest first, comma and space).
 */
export const noRegisteredProvider = (
  given: string,
  type: string,
  location: string,
  supported: readonly string[],
  locations: readonly string[],
): ArmError =>
  armError(
    400,
    "NoRegisteredProviderFound",
    `No registered resource provider found for location '${location}' and API version '${given}' for type '${type}'. The supported api-versions are '${supported.join(", ")}'. The supported locations are '${locations.join(", ")}'.`,
  );

export const emptyIfMatch = (): ArmError =>
  armError(400, "InvalidParameter", "The value of the If-Match header is empty: give the resource's ETag or '*'.");

export const invalidJson = (detail: string): ArmError =>
  armError(400, "InvalidRequestContent", `The request content was invalid and could not be deserialized: '${detail}'.`);

export const badRequest = (code: string, message: string): ArmError => armError(400, code, message);

export const subscriptionNotFound = (sub: string): ArmError =>
  armError(404, "SubscriptionNotFound", `The subscription '${sub}' could not be found.`);

export const resourceGroupNotFound = (rg: string): ArmError =>
  armError(404, "ResourceGroupNotFound", `Resource group '${rg}' could not be found.`);

export const resourceNotFound = (type: string, name: string, rg: string): ArmError =>
  armError(
    404,
    "ResourceNotFound",
    `The Resource '${type}/${name}' under resource group '${rg}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
  );

export const routeNotFound = (path: string): ArmError =>
  armError(404, "NotFound", `The simulator serves no resource at '${path}'.`);

/** CRP's 412 body, exactly: no details. Both values are echoed as sent/stored, quotes included. */
export const preconditionFailed = (provided: string, actual: string): ArmError =>
  armError(
    412,
    "PreconditionFailed",
    `Etag provided in if-match header ${provided} does not match etag ${actual} of resource.`,
  );

/** CRP's current 409 text for a write while another operation runs on the resource, its suffix included: clients
 *  match the code and the start of the text, never the whole of it. */
export const CONCURRENT_REQUEST_MESSAGE =
  "The request failed due to conflict with a concurrent request. To resolve it, please refer to https://aka.ms/activitylog to get more details on the conflicting requests.";
export const concurrentRequest = (): ArmError => armError(409, "Conflict", CONCURRENT_REQUEST_MESSAGE);

/**
 * What an operation ends with when a newer write to the same resource preempts it (azure-rest-api-specs issue 22434).
 */
export const OPERATION_PREEMPTED = {
  code: "OperationPreempted",
  message: "Operation execution has been preempted by a more recent operation.",
};

export const rollingUpgradeInProgress = (scaleSet: string, instanceId: string): ArmError =>
  armError(
    409,
    "OperationNotAllowed",
    `'Put on Virtual Machine Scale Set VM Instance' is not allowed on Virtual Machine Scale Set '${scaleSet}' instance '${instanceId}' while a rolling upgrade is in progress.`,
  );

/** CRP's answer to a non-numeric instance ID, as recorded (charged one request, as recorded too). */
export const invalidInstanceId = (): ArmError =>
  new ArmError(
    400,
    {
      error: {
        code: "InvalidParameter",
        message: "Virtual Machine Scale Set VM instanceId must be a number.",
        target: "instanceId",
      },
    },
    { "x-ms-request-charge": "1" },
  );

/** CRP's answer to a write to a scale set whose delete runs (microsoft/onefuzz PR 511): not `Conflict`. */
export const markedForDeletion = (operation: string, scaleSet: string): ArmError =>
  armError(
    409,
    "OperationNotAllowed",
    `Operation '${operation}' is not allowed on Virtual Machine Scale Set '${scaleSet}' since it is marked for deletion. For more information on your operations, please refer to https://aka.ms/activitylog`,
  );

/** If-Match values as CRP compares and echoes them: an unquoted value is quoted (recorded: `invalid` → `"invalid"`). */
export function crpEtagValue(v: string): string {
  const t = v.trim();
  if (t === "*" || t.startsWith('"') || t.startsWith("W/")) return t;
  return `"${t}"`;
}

/** If-Match values as NRP compares and echoes them: weak (recorded: `invalid` → `W/"invalid"`). */
export function nrpEtagValue(v: string): string {
  const t = v.trim();
  if (t === "*" || t.startsWith("W/")) return t;
  return t.startsWith('"') ? `W/${t}` : `W/"${t}"`;
}

export const locationRequired = (): ArmError =>
  badRequest("LocationRequired", "The location property is required for this definition.");

export const locationChanged = (type: string, name: string, stored: string, given: string, rg: string): ArmError =>
  armError(
    400,
    "InvalidResourceLocation",
    `The resource '${name}' of type '${type}' already exists in location '${stored}' in resource group '${rg}'. A resource with the same name cannot be created in location '${given}'. Please select a new resource name.`,
  );

export const invalidReference = (referenced: string, by: string): ArmError =>
  armError(
    400,
    "InvalidResourceReference",
    `Resource ${referenced} referenced by resource ${by} was not found. Please make sure that the referenced resource exists, and that both resources are in the same region.`,
  );

/** CRP's answer to a write to an instance that is being deleted or already gone (recorded in microsoft/onefuzz issue
 *  2547; cloud-provider-azure's `InstanceIdsListInstanceIdNotActiveVM`): 400, not 404, with a target. */
export const instanceNotActive = (instanceId: string): ArmError =>
  new ArmError(400, {
    error: {
      code: "InvalidParameter",
      message: `The provided instanceId ${instanceId} is not an active Virtual Machine Scale Set VM instanceId.`,
      target: "instanceIds",
    },
  });

/** The other answer seen while an instance's delete runs (microsoft/onefuzz PR 511's wording for instances). */
export const instanceMarkedForDeletion = (scaleSet: string, instanceId: string): ArmError =>
  armError(
    409,
    "OperationNotAllowed",
    `'Put on Virtual Machine Scale Set VM Instance' is not allowed on Virtual Machine Scale Set '${scaleSet}' instance '${instanceId}' since it is marked for deletion.`,
  );
