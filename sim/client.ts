// The real ComputeManagementClient pointed at a simulator. The SDK's bearer-token policy refuses plain http
// ("Bearer token authentication is not permitted for non-TLS protected (non-https) URLs"), so either start the
// simulator with `tls: true` (the client then trusts its test certificate), or, for http, this allows the insecure
// connection and swaps the SDK's policy for one that sends the same header.
import { ComputeManagementClient } from "@azure/arm-compute";
import type { ArmSimulator } from "./index";

type Credential = ConstructorParameters<typeof ComputeManagementClient>[0];
type ClientOptions = NonNullable<ConstructorParameters<typeof ComputeManagementClient>[2]>;

export const ARM_SCOPE = "https://management.azure.com/.default";

/** A TokenCredential that always returns the same token (the simulator takes any). */
export function staticTokenCredential(token = "sim-token"): Credential {
  return { getToken: () => Promise.resolve({ token, expiresOnTimestamp: Date.now() + 3_600_000 }) };
}

export function simComputeClient(
  sim: Pick<ArmSimulator, "url" | "ca">,
  subscriptionId: string,
  options: ClientOptions = {},
  token = "sim-token",
): ComputeManagementClient {
  const https = sim.url.startsWith("https:");
  const client = new ComputeManagementClient(staticTokenCredential(token), subscriptionId, {
    endpoint: sim.url,
    credentials: { scopes: [ARM_SCOPE] },
    ...(https && sim.ca ? { tlsOptions: { ca: sim.ca } } : { allowInsecureConnection: true }),
    ...options,
  });
  if (!https) {
    client.pipeline.removePolicy({ name: "bearerTokenAuthenticationPolicy" });
    client.pipeline.addPolicy(
      {
        name: "simBearerOverHttp",
        sendRequest: (request, next) => {
          request.headers.set("authorization", `Bearer ${token}`);
          return next(request);
        },
      },
      { phase: "Sign" },
    );
  }
  return client;
}
