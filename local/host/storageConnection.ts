import { azuriteConnectionString, DEFAULT_AZURITE_PORTS } from "../../devkit/azurite";

/**
 * The connection string for a binding's `connection` setting name, as the host resolves it: the setting itself
 * (`AzureWebJobsStorage` when the binding names none), with `UseDevelopmentStorage=true` meaning the local
 * emulator, which is `devStorage` when the runtime was given one, else Azurite on its standard ports. Identity-based
 * connections (`NAME__queueServiceUri`) need real Azure credentials, which a local emulator cannot check, so they
 * are refused with a message instead of failing on the first poll.
 */
export function resolveStorageConnection(
  connection: string | undefined,
  settings: Readonly<Record<string, string | undefined>>,
  devStorage: string | undefined,
): string {
  const name = connection && connection.length > 0 ? connection : "AzureWebJobsStorage";
  const value = settings[name] ?? settings[`AzureWebJobs${name}`];
  if (value && /^\s*UseDevelopmentStorage\s*=\s*true\s*;?\s*$/i.test(value))
    return devStorage ?? azuriteConnectionString(DEFAULT_AZURITE_PORTS);
  if (value) return value;
  if (settings[`${name}__queueServiceUri`] || settings[`${name}__serviceUri`] || settings[`${name}__accountName`]) {
    throw new Error(
      `Connection "${name}" is identity-based (${name}__...); the local runtime needs a connection string for it`,
    );
  }
  throw new Error(
    `Connection "${name}" is not set; add ${name} to local.settings.json (UseDevelopmentStorage=true for Azurite)`,
  );
}
