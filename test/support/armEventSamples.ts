/**
 * ARM system events shaped as Microsoft's Event Grid docs show them ("Azure Resource Manager as an Event Grid
 * source", example events), with made-up IDs. `httpRequest` is left out where the docs' samples leave it out.
 */
const SUB = "11111111-2222-3333-4444-555555555555";
const TENANT = "00000000-0000-0000-0000-000000000000";

export function eventGridEvent(opts: {
  type?: string;
  resourceUri: string;
  operationName: string;
  clientRequestId?: string;
  id?: string;
  time?: string;
}): Record<string, unknown> {
  return {
    subject: opts.resourceUri,
    eventType: opts.type ?? "Microsoft.Resources.ResourceWriteSuccess",
    eventTime: opts.time ?? "2026-12-02T10:00:00.000Z",
    id: opts.id ?? "4eef929a-a65c-47dd-93e2-46b8c17c6c17",
    data: {
      authorization: { scope: opts.resourceUri, action: opts.operationName, evidence: { role: "Contributor" } },
      claims: { appid: "aaaaaaaa-0000-0000-0000-000000000000" },
      correlationId: "7ddf2a3b-3f4c-4d44-9e1c-111111111111",
      ...(opts.clientRequestId
        ? {
            httpRequest: {
              clientRequestId: opts.clientRequestId,
              clientIpAddress: "192.0.2.10",
              method: "PUT",
              url: `https://management.azure.com${opts.resourceUri}?api-version=2026-03-01`,
            },
          }
        : {}),
      resourceProvider: "Microsoft.Compute",
      resourceUri: opts.resourceUri,
      operationName: opts.operationName,
      status: "Succeeded",
      subscriptionId: SUB,
      tenantId: TENANT,
    },
    dataVersion: "2",
    metadataVersion: "1",
    topic: `/subscriptions/${SUB}`,
  };
}

/** The same event in the CloudEvents 1.0 schema. */
export function cloudEvent(opts: Parameters<typeof eventGridEvent>[0]): Record<string, unknown> {
  const eg = eventGridEvent(opts);
  return {
    source: eg.topic,
    subject: eg.subject,
    type: eg.eventType,
    time: eg.eventTime,
    id: eg.id,
    data: eg.data,
    specversion: "1.0",
  };
}
