import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * App settings as the host sees them locally: `local.settings.json`'s `Values` when the file exists (it is
 * git-ignored, a developer's own), else `local.settings.example.json` (checked in, the defaults), else nothing.
 */
export interface LoadedSettings {
  values: Record<string, string>;
  /** The file the values came from, or undefined when neither exists. */
  source: string | undefined;
}

export function loadLocalSettings(appDir: string): LoadedSettings {
  for (const name of ["local.settings.json", "local.settings.example.json"]) {
    const file = join(appDir, name);
    if (!existsSync(file)) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
      throw new Error(`${file} is not valid JSON: ${(err as Error).message}`, { cause: err });
    }
    const values = (parsed as { Values?: unknown }).Values ?? {};
    if (typeof values !== "object" || values === null || Array.isArray(values)) {
      throw new Error(`${file}: "Values" must be an object of setting names to strings`);
    }
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(values)) {
      if (v === null || v === undefined) continue;
      out[k] = typeof v === "string" ? v : String(v);
    }
    return { values: out, source: file };
  }
  return { values: {}, source: undefined };
}

/**
 * Resolves `%NAME%` placeholders in a binding property (queue names, schedules) from the settings, as the host's
 * name resolver does at startup. A missing setting is a startup error naming the binding, never an empty string.
 */
export function resolvePlaceholders(
  value: string,
  settings: Readonly<Record<string, string | undefined>>,
  what: string,
): string {
  return value.replace(/%([^%]+)%/g, (_, name: string) => {
    const resolved = settings[name];
    if (resolved === undefined || resolved === "") {
      throw new Error(
        `${what}: "%${name}%" does not resolve to a value; set ${name} in local.settings.json or the environment`,
      );
    }
    return resolved;
  });
}
