import { ComputeManagementClient, type VirtualMachineScaleSet, type VirtualMachineScaleSetVM } from "@azure/arm-compute";
import type { TokenCredential } from "@azure/core-auth";
import { createDefaultHttpClient, createPipelineRequest } from "@azure/core-rest-pipeline";
import { BeingDeletedError, TransientError } from "../core/errors";
import type { InstanceModel, ScaleSetModel } from "../core/models";
import type { NicConfiguration } from "../core/networkProfile";
import type { Clock, ComputePort, WriteOptions } from "../core/ports";
import type { InstanceRef, ScaleSetRef } from "../core/resourceIds";
import { classifyArmError } from "./armErrors";
import { waitForOperation, type PollOptions } from "./operationPoller";
import { ARM_READS_MARGIN, rateLimitHeadersPolicy, type RateLimitObservation } from "./rateLimitHeaders";
import { ReadPacer } from "./readPacing";

/**
 * The Compute edge: a thin layer over ComputeManagementClient. It passes If-Match explicitly (the SDK never
 * sends a body's etag), tags every write with our x-ms-client-request-id, and turns every failure into a typed
 * outcome. The SDK's own retry policies are off: they would sleep out a 429's Retry-After inside the invocation.
 */

export interface ArmComputeOptions {
  endpoint: string;
  /** PEM of an extra CA to trust (the simulator's test certificate). */
  ca?: string;
  credential: TokenCredential;
  scope: string;
  clock: Clock;
  requestTimeoutMs: number;
  operationMaxWaitMs: number;
  operationPollIntervalMs: number;
  /** Pace reads inside ARM's per-subscription read bucket (POOLSYNC_PACING_ENABLED); default on. */
  pacing?: boolean;
  /** Every budget figure ARM's and CRP's answers carry (x-ms-ratelimit-remaining-*), for the write pacer. */
  onRateLimit?: (o: RateLimitObservation) => void;
}

interface WriteCallOptions {
  ifMatch: string;
  abortSignal: AbortSignal;
  requestOptions: { headers: Record<string, string> };
  onResponse: (r: { status: number; headers: RawAnswer["headers"]; parsedBody?: unknown }) => void;
}

interface RawAnswer {
  status: number;
  headers: { get(name: string): string | undefined | null };
  body: unknown;
}

function toScaleSetModel(vmss: VirtualMachineScaleSet, fallbackId: string): ScaleSetModel {
  return {
    id: vmss.id ?? fallbackId,
    etag: vmss.etag ?? "",
    location: vmss.location,
    provisioningState: vmss.provisioningState,
    capacity: vmss.sku?.capacity,
    nics: (vmss.virtualMachineProfile?.networkProfile?.networkInterfaceConfigurations ?? []) as NicConfiguration[],
  };
}

function toInstanceModel(vm: VirtualMachineScaleSetVM, fallbackId: string): InstanceModel {
  return {
    id: vm.id ?? fallbackId,
    instanceId: vm.instanceId ?? fallbackId.split("/").pop() ?? "",
    etag: vm.etag ?? "",
    location: vm.location,
    provisioningState: vm.provisioningState,
    nics: (vm.networkProfileConfiguration?.networkInterfaceConfigurations ?? []) as NicConfiguration[],
  };
}

/** The ETag a write answered; the rest of the body is not needed (see writeScaleSetNics). */
function answerFacts(raw: RawAnswer | undefined): { etag: string | undefined } {
  const body = (raw?.body ?? {}) as { etag?: string };
  return { etag: raw?.headers.get("etag") ?? body.etag ?? undefined };
}

export class ArmCompute implements ComputePort {
  private readonly clients = new Map<string, ComputeManagementClient>();
  private readonly poll: PollOptions;
  private readonly httpClient = createDefaultHttpClient();
  private readonly readPacer: ReadPacer | undefined;

  constructor(private readonly opts: ArmComputeOptions) {
    this.poll = {
      armEndpoint: opts.endpoint,
      clock: opts.clock,
      maxWaitMs: opts.operationMaxWaitMs,
      defaultIntervalMs: opts.operationPollIntervalMs,
    };
    this.readPacer = opts.pacing === false ? undefined : new ReadPacer(opts.clock);
  }

  private client(subscriptionId: string): ComputeManagementClient {
    const key = subscriptionId.toLowerCase();
    let c = this.clients.get(key);
    if (!c) {
      c = new ComputeManagementClient(this.opts.credential, subscriptionId, {
        endpoint: this.opts.endpoint,
        credentials: { scopes: [this.opts.scope] },
        retryOptions: { maxRetries: 0 },
        ...(this.opts.ca ? { tlsOptions: { ca: this.opts.ca } } : {}),
      });
      // Added to each client: the operation polls go through the first client's pipeline, whatever subscription.
      if (this.readPacer) c.pipeline.addPolicy(this.readPacer.policy(), { afterPhase: "Retry" });
      // What the server says is left counts every host of the app: the pacers plan on no more.
      c.pipeline.addPolicy(rateLimitHeadersPolicy((o) => this.learn(o)), { afterPhase: "Retry" });
      this.clients.set(key, c);
    }
    return c;
  }

  private learn(o: RateLimitObservation): void {
    if (o.kind === "armReads") this.readPacer?.learnRemaining(o.subscriptionId, o.remaining - ARM_READS_MARGIN);
    else this.opts.onRateLimit?.(o);
  }

  private signal(): AbortSignal {
    return AbortSignal.timeout(this.opts.requestTimeoutMs);
  }

  async getScaleSet(ref: ScaleSetRef): Promise<ScaleSetModel> {
    try {
      const vmss = await this.client(ref.subscriptionId).virtualMachineScaleSets.get(ref.resourceGroup, ref.name, { abortSignal: this.signal() });
      return toScaleSetModel(vmss, ref.id);
    } catch (err) {
      throw classifyArmError(err, `GET ${ref.id}`);
    }
  }

  /**
   * A sparse PUT, as cloud-provider-azure sends: location and the NIC configurations, nothing else, so a stale
   * cached sku or capacity can never be written back. CRP replaces the NIC array whole with what we send, so the
   * model after the write is `base` with our NICs and the answered ETag; reading the answer's body back would
   * need the SDK's internal deserializer and buys nothing.
   */
  async writeScaleSetNics(ref: ScaleSetRef, base: ScaleSetModel, nics: NicConfiguration[], opts: WriteOptions): Promise<ScaleSetModel> {
    const body = { location: base.location, virtualMachineProfile: { networkProfile: { networkInterfaceConfigurations: nics } } } as VirtualMachineScaleSet;
    const etag = await this.write(ref.id, base.provisioningState, opts, (o) =>
      this.client(ref.subscriptionId).virtualMachineScaleSets.createOrUpdate(ref.resourceGroup, ref.name, body, o),
    );
    return { ...base, nics, etag: etag ?? base.etag, provisioningState: "Succeeded" };
  }

  async listInstances(ref: ScaleSetRef): Promise<InstanceModel[]> {
    try {
      const out: InstanceModel[] = [];
      for await (const vm of this.client(ref.subscriptionId).virtualMachineScaleSetVMs.list(ref.resourceGroup, ref.name, { abortSignal: this.signal() })) {
        out.push(toInstanceModel(vm, `${ref.id}/virtualMachines/${vm.instanceId ?? ""}`));
      }
      return out;
    } catch (err) {
      throw classifyArmError(err, `LIST ${ref.id}/virtualMachines`);
    }
  }

  async getInstance(ref: InstanceRef): Promise<InstanceModel> {
    const s = ref.scaleSet;
    try {
      const vm = await this.client(s.subscriptionId).virtualMachineScaleSetVMs.get(s.resourceGroup, s.name, ref.instanceId, { abortSignal: this.signal() });
      return toInstanceModel(vm, ref.id);
    } catch (err) {
      throw classifyArmError(err, `GET ${ref.id}`);
    }
  }

  async writeInstanceNics(ref: InstanceRef, base: InstanceModel, nics: NicConfiguration[], opts: WriteOptions): Promise<InstanceModel> {
    const s = ref.scaleSet;
    const body = { location: base.location, networkProfileConfiguration: { networkInterfaceConfigurations: nics } } as VirtualMachineScaleSetVM;
    const etag = await this.write(ref.id, base.provisioningState, opts, (o) =>
      this.client(s.subscriptionId).virtualMachineScaleSetVMs.update(s.resourceGroup, s.name, ref.instanceId, body, o),
    );
    // A 202 may carry no ETag: then the cached instance must not pretend to know it.
    return { ...base, nics, etag: etag ?? "", provisioningState: "Succeeded" };
  }

  /**
   * One write: If-Match and our client request id, the initial answer captured, its operation waited for.
   * Answers the ETag the write reported (undefined when it reported none).
   */
  private async write(
    id: string,
    provisioningState: string | undefined,
    opts: WriteOptions,
    send: (options: WriteCallOptions) => { submitted(): Promise<void> },
  ): Promise<string | undefined> {
    if ((provisioningState ?? "").toLowerCase() === "deleting") throw new BeingDeletedError(`${id} is being deleted`);
    const what = `PUT ${id} If-Match ${opts.ifMatch}`;
    let answer: RawAnswer | undefined;
    try {
      await send({
        ifMatch: opts.ifMatch,
        abortSignal: this.signal(),
        requestOptions: { headers: { "x-ms-client-request-id": opts.clientRequestId } },
        onResponse: (r) => (answer = { status: r.status, headers: r.headers, body: r.parsedBody }),
      }).submitted();
    } catch (err) {
      throw classifyArmError(err, what);
    }
    await this.awaitOperation(answer, what);
    return answerFacts(answer).etag;
  }

  /** A GET through the SDK's own pipeline: same token, TLS settings and https-only rule as every other call. */
  private async getThroughPipeline(url: string): Promise<{ status: number; headers: { get(name: string): string | undefined }; bodyText: string }> {
    const first = this.clients.values().next().value as ComputeManagementClient | undefined;
    const client = first ?? this.client("00000000-0000-0000-0000-000000000000");
    const response = await client.pipeline.sendRequest(this.httpClient, createPipelineRequest({ url, method: "GET", timeout: this.opts.requestTimeoutMs }));
    return { status: response.status, headers: response.headers, bodyText: response.bodyAsText ?? "" };
  }

  private async awaitOperation(answer: RawAnswer | undefined, what: string): Promise<void> {
    const url = answer?.headers.get("azure-asyncoperation") ?? answer?.headers.get("location");
    if (!url) return;
    const end = await waitForOperation(url, answer?.headers.get("retry-after"), this.poll, (u) => this.getThroughPipeline(u));
    // A failed operation may have applied part of the change: retry later from fresh state, bounded by the caller.
    if (end.status !== "Succeeded") throw new TransientError(`${what}: operation ${end.status}: ${end.error}`, 30_000);
  }
}
