import type { AccessToken, GetTokenOptions, TokenCredential } from "@azure/core-auth";
import { DefaultAzureCredential, ManagedIdentityCredential } from "@azure/identity";
import type { Config } from "../config";

export { armScope } from "../core/clouds";

/**
 * A fixed bearer token: the ARM simulator accepts any, and nothing real is ever sent to it. It remembers the scopes
 * it was asked for, so a test sees which audience the app would have asked a real credential for.
 */
export class StaticTokenCredential implements TokenCredential {
  readonly scopesAsked: string[] = [];
  constructor(private readonly token: string) {}
  async getToken(scopes: string | string[], _options?: GetTokenOptions): Promise<AccessToken> {
    for (const s of Array.isArray(scopes) ? scopes : [scopes])
      if (!this.scopesAsked.includes(s)) this.scopesAsked.push(s);
    return { token: this.token, expiresOnTimestamp: Date.now() + 3_600_000 };
  }
}

/** What a real credential is built with: the cloud's Microsoft Entra authority, and the user-assigned identity. */
export function credentialOptions(config: Pick<Config, "cloud" | "armClientId">): {
  authorityHost: string;
  managedIdentityClientId?: string;
} {
  return {
    authorityHost: config.cloud.authorityHost,
    ...(config.armClientId ? { managedIdentityClientId: config.armClientId } : {}),
  };
}

export function armCredential(
  config: Pick<Config, "armCredential" | "armStaticToken" | "armClientId" | "cloud">,
): TokenCredential {
  if (config.armCredential === "static") return new StaticTokenCredential(config.armStaticToken);
  const options = credentialOptions(config);
  // A managed identity's token comes from the platform's endpoint, which knows its cloud: the authority host is for
  // DefaultAzureCredential's other sources (environment secrets, workload identity, a developer's sign-in).
  if (config.armCredential === "managedIdentity")
    return config.armClientId
      ? new ManagedIdentityCredential({ clientId: config.armClientId })
      : new ManagedIdentityCredential();
  return new DefaultAzureCredential(options);
}
