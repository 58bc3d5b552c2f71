import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./armSchema";

/**
 * Reading an ARM template the way the infra tests need: resources by type, app settings, and the values of the
 * simple expressions the templates use for names (`[variables('x')]`, `[parameters('p')]`, and the last argument of
 * a `[format(...)]`). Deliberately small: it is not an ARM expression evaluator, and a name it cannot read fails a
 * test.
 */

export interface ArmResource {
  type: string;
  apiVersion: string;
  name: string;
  condition?: unknown;
  scope?: string;
  dependsOn?: string[];
  properties?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface ArmTemplate {
  $schema: string;
  contentVersion: string;
  parameters?: Record<string, { type: string; defaultValue?: unknown; allowedValues?: unknown[] }>;
  variables?: Record<string, unknown>;
  resources: ArmResource[];
  outputs?: Record<string, unknown>;
}

export const INFRA_DIR = join(REPO_ROOT, "infra");

export function readJson<T = unknown>(relativeToInfra: string): T {
  return JSON.parse(readFileSync(join(INFRA_DIR, relativeToInfra), "utf8")) as T;
}

export function resourcesOfType(template: ArmTemplate, type: string): ArmResource[] {
  return template.resources.filter((r) => r.type.toLowerCase() === type.toLowerCase());
}

export function onlyResourceOfType(template: ArmTemplate, type: string): ArmResource {
  const found = resourcesOfType(template, type);
  if (found.length !== 1) throw new Error(`expected exactly one ${type} in the template, found ${found.length}`);
  return found[0] as ArmResource;
}

const VARIABLE = /^\[variables\('([^']+)'\)\]$/;
const PARAMETER = /^\[parameters\('([^']+)'\)\]$/;

/** A value with `[variables('x')]` replaced by the variable's value (repeatedly); anything else unchanged. */
export function resolveVariables(template: ArmTemplate, value: unknown): unknown {
  let current = value;
  for (let depth = 0; depth < 10 && typeof current === "string"; depth++) {
    const m = VARIABLE.exec(current);
    if (!m) break;
    const name = m[1] as string;
    if (!template.variables || !(name in template.variables)) throw new Error(`template has no variable ${name}`);
    current = template.variables[name];
  }
  return current;
}

/** The parameter named by a value that is exactly `[parameters('p')]`, else undefined. */
export function parameterReference(template: ArmTemplate, value: unknown): string | undefined {
  const resolved = resolveVariables(template, value);
  return typeof resolved === "string" ? PARAMETER.exec(resolved)?.[1] : undefined;
}

/** True when a string is a literal in ARM (not an expression; `[[` escapes a literal bracket). */
export function isLiteral(value: string): boolean {
  return !value.startsWith("[") || value.startsWith("[[");
}

/**
 * The last path segment of a resource name or ID expression: a literal's text after the last "/", or the last
 * argument of a `[format(...)]` when that argument is a quoted literal or `variables('x')` naming a literal.
 */
export function leafName(template: ArmTemplate, nameOrExpression: string): string {
  const resolved = resolveVariables(template, nameOrExpression);
  if (typeof resolved !== "string") throw new Error(`${nameOrExpression} does not resolve to a string`);
  if (isLiteral(resolved)) return resolved.split("/").pop() as string;
  const literal = /,\s*'([^']*)'\)\]$/.exec(resolved);
  if (literal) return literal[1] as string;
  const variable = /,\s*variables\('([^']+)'\)\)\]$/.exec(resolved);
  if (variable) {
    const leaf = resolveVariables(template, `[variables('${variable[1] as string}')]`);
    if (typeof leaf === "string" && isLiteral(leaf)) return leaf;
  }
  throw new Error(`cannot read the leaf name of ${nameOrExpression} (${resolved})`);
}

/** The Function App's app settings as name → raw value (expressions unevaluated); duplicates throw. */
export function appSettings(template: ArmTemplate): Map<string, string> {
  const site = onlyResourceOfType(template, "Microsoft.Web/sites");
  const siteConfig = site.properties?.siteConfig as { appSettings?: { name: string; value: string }[] } | undefined;
  const out = new Map<string, string>();
  for (const { name, value } of siteConfig?.appSettings ?? []) {
    if (out.has(name)) throw new Error(`app setting ${name} is set twice`);
    out.set(name, value);
  }
  return out;
}

/** SETTINGS name → template parameter name for a required setting: POOLSYNC_SCOPES → poolsyncScopes. */
export function parameterNameFor(settingName: string): string {
  return settingName.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

interface EventSubscriptionProperties {
  destination?: { endpointType?: string; properties?: { resourceId?: string } };
}

/** The function names the template's Event Grid subscriptions deliver to (AzureFunction destinations). */
export function eventGridDestinationFunctionNames(template: ArmTemplate): string[] {
  return resourcesOfType(template, "Microsoft.EventGrid/systemTopics/eventSubscriptions").map((sub) => {
    const destination = (sub.properties as EventSubscriptionProperties | undefined)?.destination;
    if (destination?.endpointType !== "AzureFunction")
      throw new Error(`event subscription ${sub.name} is not an AzureFunction destination`);
    const resourceId = resolveVariables(template, destination.properties?.resourceId);
    if (typeof resourceId !== "string" || !resourceId.includes("/functions/")) {
      throw new Error(
        `event subscription ${sub.name}: destination resourceId ${String(resourceId)} is not <site id>/functions/<name>`,
      );
    }
    return leafName(template, resourceId);
  });
}

/**
 * The seam for the check "the Event Grid destination names a function the app registers with an Event Grid
 * trigger": give it the Event Grid function names the built app registers; it returns one problem per destination
 * that is not among them (empty = consistent).
 */
export function unregisteredEventGridDestinations(
  template: ArmTemplate,
  registeredEventGridFunctionNames: readonly string[],
): string[] {
  return eventGridDestinationFunctionNames(template)
    .filter((name) => !registeredEventGridFunctionNames.includes(name))
    .map(
      (name) =>
        `Event Grid delivers to function "${name}", but the app registers no Event Grid trigger by that name (registered: ${registeredEventGridFunctionNames.join(", ") || "none"})`,
    );
}
