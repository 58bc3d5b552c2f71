import type {
  ComputeManagementClient,
  VirtualMachine,
  VirtualMachineScaleSet,
  VirtualMachineScaleSetVM,
} from "@azure/arm-compute";
import type { TokenCredential } from "@azure/core-auth";
import { createDefaultHttpClient } from "@azure/core-rest-pipeline";
import { BeingDeletedError } from "../core/errors";
import { requireEtag } from "../core/etagGuard";
import type { InstanceModel, ScaleSetModel, VmModel } from "../core/models";
import type { NicConfiguration } from "../core/networkProfile";
import type { Clock, ComputePort, ResourceGroupScope, ScaleSetPage, WriteOptions } from "../core/ports";
import type { InstanceRef, ScaleSetRef, VmRef } from "../core/resourceIds";
import { pinComputeApiVersion } from "./apiVersion";
import { classifyArmError } from "./armErrors";
import { armOriginPolicy, continuationFor } from "./armOriginPolicy";
import { awaitWriteOperation, getThroughPipeline, type PollOptions } from "./operationPoller";
import type { RateLimitObservation } from "../pacing/learnWriteBudget";
import { ARM_READS_MARGIN, rateLimitHeadersPolicy } from "./rateLimitHeaders";
import { armTelemetryPolicy } from "./armTelemetryPolicy";
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
  /** Longest wait for the read budget inside one call; a longer one fails the read as throttled (default: no cap). */
  pacingMaxWaitMs?: number;
  /** The pacer to use (shared with the Network edge); else one of its own. */
  readPacer?: ReadPacer;
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
    ...(vmss.upgradePolicy?.mode ? { upgradeMode: vmss.upgradePolicy.mode } : {}),
    orchestrationMode: vmss.orchestrationMode,
    networkApiVersion: vmss.virtualMachineProfile?.networkProfile?.networkApiVersion,
  };
}

export function toVmModel(vm: VirtualMachine, fallbackId: string): VmModel {
  const nics = vm.networkProfile?.networkInterfaces ?? [];
  const ids = nics.map((n) => n.id).filter((id): id is string => typeof id === "string");
  // A lone NIC is the primary one without the flag, as Azure treats it.
  const primary = nics.find((n) => n.primary === true)?.id ?? (ids.length === 1 ? ids[0] : undefined);
  const configs = vm.networkProfile?.networkInterfaceConfigurations;
  return {
    id: vm.id ?? fallbackId,
    etag: vm.etag ?? "",
    provisioningState: vm.provisioningState,
    scaleSetId: vm.virtualMachineScaleSet?.id,
    nicIds: ids,
    primaryNicId: primary,
    ...(configs && configs.length > 0
      ? {
          nicConfigurations: configs.map((c) => ({
            name: c.name,
            primary: c.primary,
            ipConfigurationNames: (c.ipConfigurations ?? []).map((ip) => ip.name),
          })),
        }
      : {}),
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
    vmId: vm.vmId,
  };
}

/** The ETag a write answered; the rest of the body is not needed (see writeScaleSetNics). */
function answerFacts(raw: RawAnswer | undefined): { etag: string | undefined } {
  const body = (raw?.body ?? {}) as { etag?: string };
  return { etag: raw?.headers.get("etag") ?? body.etag ?? undefined };
}

/**
 * The SDK is loaded on the first ARM call, not with this module: the HTTP and Event Grid functions never call
 * Compute, and on Flex Consumption each function group cold-starts on instances of its own.
 */
function computeSdk(): typeof import("@azure/arm-compute") {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load the SDK on cold start
  return require("@azure/arm-compute") as typeof import("@azure/arm-compute");
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
    this.readPacer =
      opts.pacing === false ? undefined : (opts.readPacer ?? new ReadPacer(opts.clock, opts.pacingMaxWaitMs));
  }

  private client(subscriptionId: string): ComputeManagementClient {
    const key = subscriptionId.toLowerCase();
    let c = this.clients.get(key);
    if (!c) {
      c = new (computeSdk().ComputeManagementClient)(this.opts.credential, subscriptionId, {
        endpoint: this.opts.endpoint,
        credentials: { scopes: [this.opts.scope] },
        retryOptions: { maxRetries: 0 },
        ...(this.opts.ca ? { tlsOptions: { ca: this.opts.ca } } : {}),
      });
      c.pipeline.addPolicy(pinComputeApiVersion());
      c.pipeline.addPolicy(armOriginPolicy(this.opts.endpoint), { afterPhase: "Sign" });
      // Added to each client: the operation polls go through the first client's pipeline, whatever subscription.
      if (this.readPacer) c.pipeline.addPolicy(this.readPacer.policy(), { afterPhase: "Retry" });
      // What the server says is left counts every host of the app: the pacers plan on no more.
      c.pipeline.addPolicy(
        rateLimitHeadersPolicy((o) => this.learn(o)),
        { afterPhase: "Retry" },
      );
      c.pipeline.addPolicy(armTelemetryPolicy(), { afterPhase: "Retry" });
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
      const vmss = await this.client(ref.subscriptionId).virtualMachineScaleSets.get(ref.resourceGroup, ref.name, {
        abortSignal: this.signal(),
      });
      return toScaleSetModel(vmss, ref.id);
    } catch (err) {
      throw classifyArmError(err, `GET ${ref.id}`);
    }
  }

  async listScaleSetsPage(scope: ResourceGroupScope, nextLink?: string): Promise<ScaleSetPage> {
    const where = `/subscriptions/${scope.subscriptionId}/resourceGroups/${scope.resourceGroup}/providers/Microsoft.Compute/virtualMachineScaleSets`;
    // A continuation read back from storage is input: one that is not this group's LIST on ARM_ENDPOINT starts over.
    const from = continuationFor(nextLink, this.opts.endpoint, where);
    try {
      // byPage from a continuation token (the nextLink) fetches exactly that page: one request per call, so the caller
      // counts its budget in pages and can stop, or resume in a later run, between any two.
      const pages = this.client(scope.subscriptionId)
        .virtualMachineScaleSets.list(scope.resourceGroup, { abortSignal: this.signal() })
        .byPage(from ? { continuationToken: from } : {});
      const first = await pages.next();
      if (first.done) return { models: [], nextLink: undefined };
      const page = first.value as VirtualMachineScaleSet[] & { continuationToken?: string };
      return {
        models: page.map((vmss) => toScaleSetModel(vmss, `${where}/${vmss.name ?? ""}`)),
        nextLink: page.continuationToken || undefined,
      };
    } catch (err) {
      throw classifyArmError(err, `LIST ${where}${nextLink ? " (next page)" : ""}`);
    }
  }

  /**
   * A sparse PUT, as cloud-provider-azure sends: location and the NIC configurations, nothing else, so a stale
   * cached sku or capacity can never be written back. CRP replaces the NIC array whole with what we send, so the
   * model after the write is `base` with our NICs and the answered ETag; reading the answer's body back would
   * need the SDK's internal deserializer and buys nothing.
   */
  async writeScaleSetNics(
    ref: ScaleSetRef,
    base: ScaleSetModel,
    nics: NicConfiguration[],
    opts: WriteOptions,
  ): Promise<ScaleSetModel> {
    // A Flexible model is refused without its networkApiVersion: send it back as read.
    const networkProfile = {
      ...(base.networkApiVersion ? { networkApiVersion: base.networkApiVersion } : {}),
      networkInterfaceConfigurations: nics,
    };
    const body = { location: base.location, virtualMachineProfile: { networkProfile } } as VirtualMachineScaleSet;
    const etag = await this.write(ref.id, base.provisioningState, opts, (o) =>
      this.client(ref.subscriptionId).virtualMachineScaleSets.createOrUpdate(ref.resourceGroup, ref.name, body, o),
    );
    return { ...base, nics, etag: etag ?? base.etag, provisioningState: "Succeeded" };
  }

  async listInstances(ref: ScaleSetRef): Promise<InstanceModel[]> {
    try {
      const out: InstanceModel[] = [];
      for await (const vm of this.client(ref.subscriptionId).virtualMachineScaleSetVMs.list(
        ref.resourceGroup,
        ref.name,
        { abortSignal: this.signal() },
      )) {
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
      const vm = await this.client(s.subscriptionId).virtualMachineScaleSetVMs.get(
        s.resourceGroup,
        s.name,
        ref.instanceId,
        { abortSignal: this.signal() },
      );
      return toInstanceModel(vm, ref.id);
    } catch (err) {
      throw classifyArmError(err, `GET ${ref.id}`);
    }
  }

  async getVm(ref: VmRef): Promise<VmModel> {
    try {
      const vm = await this.client(ref.subscriptionId).virtualMachines.get(ref.resourceGroup, ref.name, {
        abortSignal: this.signal(),
      });
      return toVmModel(vm, ref.id);
    } catch (err) {
      throw classifyArmError(err, `GET ${ref.id}`);
    }
  }

  async listVms(scope: { subscriptionId: string; resourceGroup: string }): Promise<VmModel[]> {
    const where = `/subscriptions/${scope.subscriptionId}/resourceGroups/${scope.resourceGroup}/providers/Microsoft.Compute/virtualMachines`;
    try {
      const out: VmModel[] = [];
      for await (const vm of this.client(scope.subscriptionId).virtualMachines.list(scope.resourceGroup, {
        abortSignal: this.signal(),
      })) {
        out.push(toVmModel(vm, `${where}/${vm.name ?? ""}`));
      }
      return out;
    } catch (err) {
      throw classifyArmError(err, `LIST ${where}`);
    }
  }

  async writeInstanceNics(
    ref: InstanceRef,
    base: InstanceModel,
    nics: NicConfiguration[],
    opts: WriteOptions,
  ): Promise<InstanceModel> {
    const s = ref.scaleSet;
    const body = {
      location: base.location,
      networkProfileConfiguration: { networkInterfaceConfigurations: nics },
    } as VirtualMachineScaleSetVM;
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
    requireEtag(id, opts.ifMatch); // never an unconditional write, whatever the caller passed
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
  /** Operation polls go through the first client's pipeline, whatever subscription: the operation URL names it. */
  private pollThroughPipeline(url: string) {
    const first = this.clients.values().next().value as ComputeManagementClient | undefined;
    const client = first ?? this.client("00000000-0000-0000-0000-000000000000");
    return getThroughPipeline(client.pipeline, this.httpClient, url, this.opts.requestTimeoutMs);
  }

  private awaitOperation(answer: RawAnswer | undefined, what: string): Promise<void> {
    return awaitWriteOperation(answer?.headers, what, this.poll, (u) => this.pollThroughPipeline(u));
  }
}
