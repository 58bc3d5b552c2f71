// The real NetworkManagementClient pointed at a simulator, with the same plain-http arrangement as simComputeClient.
import { NetworkManagementClient, type NetworkManagementClientOptionalParams } from "@azure/arm-network";
import { ARM_SCOPE, staticTokenCredential } from "./client";
import type { ArmSimulator } from "./index";

type ClientOptions = NetworkManagementClientOptionalParams;

export function simNetworkClient(
  sim: Pick<ArmSimulator, "url" | "ca">,
  subscriptionId: string,
  options: ClientOptions = {},
  token = "sim-token",
): NetworkManagementClient {
  const https = sim.url.startsWith("https:");
  const client = new NetworkManagementClient(staticTokenCredential(token), subscriptionId, {
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
