import { ok, refuse, type Result } from "./result";

/** A subscription or resource group poolsync is allowed to touch; compared case-insensitively. */
export interface Scope {
  id: string;
  subscriptionId: string;
  resourceGroup?: string;
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function parseScope(input: string): Result<Scope> {
  const m = /^\/subscriptions\/([^/]+)(?:\/resourceGroups\/([^/]+))?\/?$/i.exec(input.trim());
  if (!m) return refuse("must be /subscriptions/{id} or /subscriptions/{id}/resourceGroups/{name}");
  const subscriptionId = m[1] ?? "";
  if (!GUID.test(subscriptionId)) return refuse(`subscription "${subscriptionId}" is not a GUID`);
  const resourceGroup = m[2];
  // ASCII only, as resource IDs (resourceIds.ts): case-insensitive comparison outside ASCII folds unlike letters.
  if (resourceGroup !== undefined && !/^[A-Za-z0-9_().-]{1,90}$/.test(resourceGroup)) {
    return refuse(`resource group "${resourceGroup}" is not a valid name`);
  }
  const id = resourceGroup
    ? `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}`
    : `/subscriptions/${subscriptionId}`;
  return ok(resourceGroup ? { id, subscriptionId, resourceGroup } : { id, subscriptionId });
}

/** Whether a resource in this subscription and resource group is inside any of the scopes. */
export function inScopes(scopes: readonly Scope[], subscriptionId: string, resourceGroup: string): boolean {
  return scopes.some(
    (s) =>
      s.subscriptionId.toLowerCase() === subscriptionId.toLowerCase() &&
      (s.resourceGroup === undefined || s.resourceGroup.toLowerCase() === resourceGroup.toLowerCase()),
  );
}
