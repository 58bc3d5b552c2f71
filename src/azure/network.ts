import type {
  ApplicationGateway,
  BackendAddressPool,
  NetworkInterface,
  NetworkManagementClient,
} from "@azure/arm-network";
import type { TokenCredential } from "@azure/core-auth";
import { createDefaultHttpClient } from "@azure/core-rest-pipeline";
import { armTelemetryPolicy } from "./armTelemetryPolicy";
import { BeingDeletedError } from "../core/errors";
import type { BackendPoolModel, NicModel, PoolAddress, ScaleSetInstanceNics } from "../core/models";
import type { NicConfiguration } from "../core/networkProfile";
import type { Clock, NetworkPort, WriteOptions } from "../core/ports";
import type { BackendPoolRef, NicRef, ScaleSetRef } from "../core/resourceIds";
import { poolFromArm, poolAddressToArm } from "./poolCodec";
import { gatewayPoolFromArm, gatewayWithAddresses } from "./gatewayCodec";
import { classifyArmError } from "./armErrors";
import { armOriginPolicy } from "./armOriginPolicy";
import { awaitWriteOperation, getThroughPipeline, type PollOptions } from "./operationPoller";
import type { ReadPacer } from "./readPacing";

/**
 * The Network RP edge, for NICs: GET the NIC whole, PUT it whole (a NIC PUT replaces the resource) with
 * If-Match on its weak ETag and our x-ms-client-request-id, wait for its operation on the operation resource
 * (never the SDK's final GET), and turn every failure into a typed outcome. The SDK's own retries are off.
 */

export interface ArmNetworkOptions {
  endpoint: string;
  ca?: string;
  credential: TokenCredential;
  scope: string;
  clock: Clock;
  requestTimeoutMs: number;
  operationMaxWaitMs: number;
  operationPollIntervalMs: number;
  /** The Compute edge's: both spend ARM's one per-subscription read bucket. */
  readPacer?: ReadPacer;
}

/** What a PUT of ours is sent with: the abort signal, If-Match and our request id, and the answer's capture. */
interface PutOptions {
  abortSignal: AbortSignal;
  requestOptions: { headers: Record<string, string> };
  onResponse: (r: {
    status: number;
    headers: PutAnswer["headers"];
    parsedBody?: unknown;
    bodyAsText?: string | null;
  }) => void;
}

/** ARM's answer to a PUT it took: its headers (the operation to await, the ETag) and body. */
interface PutAnswer {
  headers: { get(name: string): string | undefined };
  body: unknown;
}

function toNicModel(nic: NetworkInterface, fallbackId: string): NicModel {
  return {
    id: nic.id ?? fallbackId,
    etag: nic.etag ?? "",
    provisioningState: nic.provisioningState,
    nic: nic as NicConfiguration,
  };
}

/** Loaded on the first NIC call, not with this module (see computeSdk in ./compute). */
function networkSdk(): typeof import("@azure/arm-network") {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load the SDK on cold start
  return require("@azure/arm-network") as typeof import("@azure/arm-network");
}

export class ArmNetwork implements NetworkPort {
  private readonly clients = new Map<string, NetworkManagementClient>();
  private readonly poll: PollOptions;
  private readonly httpClient = createDefaultHttpClient();

  constructor(private readonly opts: ArmNetworkOptions) {
    this.poll = {
      armEndpoint: opts.endpoint,
      clock: opts.clock,
      maxWaitMs: opts.operationMaxWaitMs,
      defaultIntervalMs: opts.operationPollIntervalMs,
    };
  }

  private client(subscriptionId: string): NetworkManagementClient {
    const key = subscriptionId.toLowerCase();
    let c = this.clients.get(key);
    if (!c) {
      c = new (networkSdk().NetworkManagementClient)(this.opts.credential, subscriptionId, {
        endpoint: this.opts.endpoint,
        credentials: { scopes: [this.opts.scope] },
        retryOptions: { maxRetries: 0 },
        ...(this.opts.ca ? { tlsOptions: { ca: this.opts.ca } } : {}),
      });
      c.pipeline.addPolicy(armOriginPolicy(this.opts.endpoint), { afterPhase: "Sign" });
      if (this.opts.readPacer) c.pipeline.addPolicy(this.opts.readPacer.policy(), { afterPhase: "Retry" });
      c.pipeline.addPolicy(armTelemetryPolicy(), { afterPhase: "Retry" });
      this.clients.set(key, c);
    }
    return c;
  }

  private signal(): AbortSignal {
    return AbortSignal.timeout(this.opts.requestTimeoutMs);
  }

  async getNic(ref: NicRef): Promise<NicModel> {
    try {
      const nic = await this.client(ref.subscriptionId).networkInterfaces.get(ref.resourceGroup, ref.name, {
        abortSignal: this.signal(),
      });
      return toNicModel(nic, ref.id);
    } catch (err) {
      throw classifyArmError(err, `GET ${ref.id}`);
    }
  }

  async writeNic(
    ref: NicRef,
    base: NicModel,
    ipConfigurations: NicConfiguration["ipConfigurations"],
    opts: WriteOptions,
  ): Promise<NicModel> {
    if ((base.provisioningState ?? "").toLowerCase() === "deleting")
      throw new BeingDeletedError(`${ref.id} is being deleted`);
    const body = { ...base.nic, ipConfigurations } as NetworkInterface;
    const answer = await this.putAndAwait(ref.subscriptionId, `PUT ${ref.id} If-Match ${opts.ifMatch}`, opts, (o) =>
      this.client(ref.subscriptionId).networkInterfaces.createOrUpdate(ref.resourceGroup, ref.name, body, o),
    );
    const etag = answer?.headers.get("etag") ?? (answer?.body as { etag?: string } | undefined)?.etag;
    // NRP gives every write a new ETag; without one in the answer the NIC is not known and must be read again.
    return {
      ...base,
      nic: { ...base.nic, ipConfigurations: ipConfigurations ?? [] },
      etag: etag ?? "",
      provisioningState: "Succeeded",
    };
  }

  async getBackendPool(ref: BackendPoolRef): Promise<BackendPoolModel> {
    if (ref.poolKind === "applicationGatewayBackendPool") return this.getGatewayPool(ref);
    try {
      const pool = await this.client(ref.subscriptionId).loadBalancerBackendAddressPools.get(
        ref.resourceGroup,
        ref.parent,
        ref.name,
        { abortSignal: this.signal() },
      );
      return poolFromArm(pool as Record<string, unknown>, ref.id);
    } catch (err) {
      throw classifyArmError(err, `GET ${ref.id}`);
    }
  }

  async writeBackendPool(
    ref: BackendPoolRef,
    base: BackendPoolModel,
    addresses: PoolAddress[],
    opts: WriteOptions,
  ): Promise<BackendPoolModel> {
    if (ref.poolKind === "applicationGatewayBackendPool") return this.writeGatewayPool(ref, base, addresses, opts);
    // The pool as read, with these addresses: a pool PUT replaces it whole (read-only fields are not serialised).
    const body = { ...base.pool, loadBalancerBackendAddresses: addresses.map(poolAddressToArm) } as BackendAddressPool;
    const answer = await this.putAndAwait(ref.subscriptionId, `PUT ${ref.id} If-Match ${opts.ifMatch}`, opts, (o) =>
      this.client(ref.subscriptionId).loadBalancerBackendAddressPools.createOrUpdate(
        ref.resourceGroup,
        ref.parent,
        ref.name,
        body,
        o,
      ),
    );
    // The write's own answer is what the pool holds now (NRP answers the pool as written, with the new ETag).
    const written = poolFromArm((answer?.body ?? {}) as Record<string, unknown>, ref.id);
    return { ...written, provisioningState: "Succeeded" };
  }

  /** An Application Gateway's pool, read with its gateway (a gateway pool has no endpoint of its own). */
  private async getGatewayPool(ref: BackendPoolRef): Promise<BackendPoolModel> {
    try {
      const gateway = await this.client(ref.subscriptionId).applicationGateways.get(ref.resourceGroup, ref.parent, {
        abortSignal: this.signal(),
      });
      return gatewayPoolFromArm(gateway as Record<string, unknown>, ref.name, ref.id);
    } catch (err) {
      throw classifyArmError(err, `GET ${ref.id}`);
    }
  }

  /**
   * PUTs the gateway as read with this pool's addresses, If-Match on the gateway's ETag: the gateway is written whole
   * (every other pool, listener and setting goes back as read), and the write is long-running.
   */
  private async writeGatewayPool(
    ref: BackendPoolRef,
    base: BackendPoolModel,
    addresses: PoolAddress[],
    opts: WriteOptions,
  ): Promise<BackendPoolModel> {
    if (!base.gateway) throw new Error(`${ref.id} was not read with its gateway`);
    const body = gatewayWithAddresses(base.gateway, ref.name, addresses);
    const gatewayId = ref.id.replace(/\/backendAddressPools\/[^/]+$/i, "");
    const answer = await this.putAndAwait(ref.subscriptionId, `PUT ${gatewayId} If-Match ${opts.ifMatch}`, opts, (o) =>
      this.client(ref.subscriptionId).applicationGateways.createOrUpdate(
        ref.resourceGroup,
        ref.parent,
        body as ApplicationGateway,
        o,
      ),
    );
    // The write's own answer is what the pool holds now; the gateway to write next is the one sent, at its new ETag.
    const answered = gatewayPoolFromArm((answer?.body ?? {}) as Record<string, unknown>, ref.name, ref.id);
    return { ...answered, gateway: { ...body, etag: answered.etag }, provisioningState: "Succeeded" };
  }

  /**
   * One long-running PUT with If-Match: sent alone (`submitted()`: its operation is polled here on the operation
   * resource, not by the SDK), its refusal mapped to a typed error with ARM's own words, its operation awaited. The
   * answer's headers and body are what the write holds now.
   */
  private async putAndAwait(
    subscriptionId: string,
    what: string,
    opts: WriteOptions,
    send: (options: PutOptions) => { submitted(): Promise<unknown> },
  ): Promise<PutAnswer | undefined> {
    let answer: PutAnswer | undefined;
    let refused: string | undefined;
    try {
      await send({
        abortSignal: this.signal(),
        requestOptions: { headers: { "if-match": opts.ifMatch, "x-ms-client-request-id": opts.clientRequestId } },
        onResponse: (r) => {
          if (r.status >= 400) refused = r.bodyAsText ?? undefined;
          else answer ??= { headers: r.headers, body: r.parsedBody };
        },
      }).submitted();
    } catch (err) {
      throw classifyArmError(err, what, refused);
    }
    await awaitWriteOperation(answer?.headers, what, this.poll, (u) =>
      getThroughPipeline(this.client(subscriptionId).pipeline, this.httpClient, u, this.opts.requestTimeoutMs),
    );
    return answer;
  }

  async listScaleSetNics(ref: ScaleSetRef): Promise<ScaleSetInstanceNics[]> {
    const byInstance = new Map<string, ScaleSetInstanceNics>();
    try {
      const pages = this.client(ref.subscriptionId).networkInterfaces.listVirtualMachineScaleSetNetworkInterfaces(
        ref.resourceGroup,
        ref.name,
        { abortSignal: this.signal() },
      );
      for await (const nic of pages) {
        const instanceId = /\/virtualMachines\/([^/]+)\/networkInterfaces\//i.exec(nic.id ?? "")?.[1];
        if (instanceId === undefined) continue;
        const entry = byInstance.get(instanceId) ?? { instanceId, nics: [] };
        entry.nics.push(nic as NicConfiguration);
        byInstance.set(instanceId, entry);
      }
    } catch (err) {
      throw classifyArmError(err, `GET ${ref.id}/networkInterfaces`);
    }
    return [...byInstance.values()];
  }
}
