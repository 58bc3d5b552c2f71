import type { AccessToken, TokenCredential } from "@azure/core-auth";
import { DefaultAzureCredential, ManagedIdentityCredential } from "@azure/identity";
import type { Config } from "../config";

/** A fixed bearer token: the ARM simulator accepts any, and nothing real is ever sent to it. */
export class StaticTokenCredential implements TokenCredential {
  constructor(private readonly token: string) {}
  async getToken(): Promise<AccessToken> {
    return { token: this.token, expiresOnTimestamp: Date.now() + 3_600_000 };
  }
}

export function armCredential(
  config: Pick<Config, "armCredential" | "armStaticToken" | "armClientId">,
): TokenCredential {
  if (config.armCredential === "static") return new StaticTokenCredential(config.armStaticToken);
  if (config.armCredential === "managedIdentity")
    return config.armClientId
      ? new ManagedIdentityCredential({ clientId: config.armClientId })
      : new ManagedIdentityCredential();
  return new DefaultAzureCredential();
}

/** The token scope for an ARM endpoint: real ARM and the simulator alike want "<endpoint>/.default". */
export function armScope(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, "")}/.default`;
}
