import { TableClient } from "@azure/data-tables";
import { ManagedIdentityCredential, DefaultAzureCredential } from "@azure/identity";
import { QueueClient } from "@azure/storage-queue";
import type { TokenCredential } from "@azure/core-auth";
import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import type { StorageConnection } from "../config";

/** Table and queue clients from the AzureWebJobsStorage connection, the same one the queue trigger uses. */

function identity(conn: Extract<StorageConnection, { kind: "identity" }>): TokenCredential {
  return conn.clientId ? new ManagedIdentityCredential({ clientId: conn.clientId }) : new DefaultAzureCredential();
}

/** Extra Table pipeline policies (benchmarks count round trips with one); the queue SDK has no such hook. */
export type StoragePolicies = readonly PipelinePolicy[];

const additional = (policies: StoragePolicies) => policies.map((policy) => ({ policy, position: "perCall" as const }));

/**
 * Every Table request ends within `ms`: the SDK's default is no timeout at all, so a storage front end that accepts
 * the connection and never answers would hold the invocation until the host's functionTimeout kills it. Per retry,
 * so the SDK's own retries still apply.
 */
export function tableTimeoutPolicy(ms: number): PipelinePolicy {
  return {
    name: "poolsyncTableTimeout",
    sendRequest(request, next) {
      if (!request.timeout || request.timeout > ms) request.timeout = ms;
      return next(request);
    },
  };
}

export function tableClient(
  conn: StorageConnection,
  table: string,
  policies: StoragePolicies = [],
  timeoutMs?: number,
): TableClient {
  const timeout = timeoutMs ? [{ policy: tableTimeoutPolicy(timeoutMs), position: "perRetry" as const }] : [];
  const additionalPolicies = [...additional(policies), ...timeout];
  if (conn.kind === "connectionString") {
    // Azurite speaks plain http on loopback; real accounts' connection strings say https.
    return TableClient.fromConnectionString(conn.connectionString, table, {
      allowInsecureConnection: /TableEndpoint=http:/i.test(conn.connectionString),
      additionalPolicies,
    });
  }
  return new TableClient(conn.tableServiceUri, table, identity(conn), { additionalPolicies });
}

export function queueClient(conn: StorageConnection, queue: string): QueueClient {
  if (conn.kind === "connectionString") return new QueueClient(conn.connectionString, queue);
  return new QueueClient(`${conn.queueServiceUri.replace(/\/+$/, "")}/${queue}`, identity(conn));
}

/** Creates a table or queue that may already exist; the deployment creates them, the local run needs this. */
export async function ensureTable(client: TableClient): Promise<void> {
  try {
    await client.createTable();
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode;
    if (status !== 409) throw err;
  }
}

export async function ensureQueue(client: QueueClient): Promise<void> {
  await client.createIfNotExists();
}
