// Every setting of the simulator with its default. Where Azure's real behaviour is unknown, the setting says so.
import type { EventGridEvent, EventSchema } from "./events";
import type { SeedSpec } from "./seed";
import type { SpecConformanceOptions } from "./specConformance";
import type { PolicyNaming, RefillMode } from "./throttle";

export interface ThrottlingOptions {
  /** Simulated seconds per real second for the whole simulator (also settable as the top-level `timeScale`). */
  timeScale?: number;
  /** "perMinute" (CRP's documented refill, default) or "continuous". */
  refill?: RefillMode;
  /** Also enforce ARM's per-subscription read/write/delete buckets (default true). */
  arm?: boolean;
}

export interface ArmSimulatorOptions {
  /** 0 = ephemeral (default). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Serve HTTPS with the test-only certificate in sim/tls (the SDK sends bearer tokens to https only). */
  tls?: boolean;
  /** "demo" or a spec. Nothing is seeded by default. */
  seed?: "demo" | SeedSpec;
  /** Per-request latency in simulated ms: fixed + uniform random jitter (default 0/0). */
  latency?: { fixedMs: number; jitterMs: number };
  /** Seed of the jitter's random generator (default 1). */
  randomSeed?: number;
  /** How long a write's long-running operation takes, simulated ms (default 20). */
  operationDurationMs?: number;
  /** Retry-After on long-running-operation answers, seconds. CRP's value is not documented; default 0, so a client
   *  uses its own poll interval (the SDK's `updateIntervalInMs`). */
  operationRetryAfterSeconds?: number;
  /** The scale set's ETag bumps this long (simulated ms) after an instance write: CRP's internal operation, which no
   *  event announces. Its real delay is not documented; default: seeded random, 1,000 to 5,000 ms for each bump. */
  instanceWritePropagatesToScaleSetAfterMs?: number;
  /**
   * Answer 409 (concurrent request) to a write while an operation is in progress on the same resource (default true).
   */
  conflictWhileOperationInProgress?: boolean;
  /** Conflicts beyond one resource (default true): instance deletes of one scale set, and a scale-set-level
   *  operation (model write, scale, manualUpgrade, instance delete) against instance writes, answer 409 while the
   *  other runs (kubernetes/autoscaler PR 3284; cloud-provider-azure issue 2386). */
  conflictAcrossScaleSet?: boolean;
  /** Scale set writes' operations, simulated ms (default `operationDurationMs`). The slow profile: 30,000. */
  scaleSetWriteMs?: number;
  /** Instance writes' operations, simulated ms (default `operationDurationMs`). The slow profile: 30,000. */
  instanceWriteMs?: number;
  /** A newer write to a resource preempts its running operation (which ends Canceled, OperationPreempted) instead of
   *  being refused with 409 (default false). */
  preemptRunningOperation?: boolean;
  /** Automatic upgrades: instances take a model change this long after it (simulated ms); Rolling: each batch takes
   *  this long (default 2,000; CRP's real pace is not documented). */
  upgradeStepMs?: number;
  /** Automatic and Rolling upgrades of a Flexible scale set roll a model's network change to its VMs: their own NIC
   *  configurations and their NICs' pool references (default false: Microsoft does not say CRP does). */
  flexibleUpgradeRollsNetwork?: boolean;
  /** NIC PUTs run a long-running operation (Azure-AsyncOperation, ETag header) instead of answering synchronously as
   *  recorded (201/200, Succeeded, no operation, the etag only in the body). Default false. */
  nicWriteAsync?: boolean;
  /** Share (0 to 1) of Network RP writes that fail transiently with NRP's 429 RetryableError, drawn from the
   *  seeded PRNG (`randomSeed + 2`) (default 0). */
  nrpTransientFailureRate?: number;
  /** Retry-After of NRP's RetryableError answers, seconds (default 10; NRP's value for these is not public). */
  nrpRetryAfterSeconds?: number;
  /** Load balancer and backend pool writes' operations, simulated ms (default `operationDurationMs`). NRP's real
   *  durations are not public (recordings normalise them). */
  loadBalancerWriteMs?: number;
  /** Application gateway writes' operations, simulated ms (default `operationDurationMs`); real ones take minutes. */
  appGatewayWriteMs?: number;
  /** A write to a load balancer (or one of its pools) or an application gateway whose operation still runs: false
   *  (default) answers NRP's 409 `AnotherOperationInProgress`; true cancels the running one instead
   *  (`CanceledAndSupersededDueToAnotherOperation`, as NRP did to PutLoadBalancerOperation in
   *  terraform-provider-azurerm issue 10178). A load balancer PUT always cancels a running pool PUT (azure-cli 21156). */
  supersedeRunningNetworkWrite?: boolean;
  /** Schema `/_sim/events` answers in (a subscription picks one): Event Grid's (default) or CloudEvents 1.0. In-process,
   *  `control.events()` and `onEvent` give the Event Grid schema and `control.cloudEvents()` the other. */
  eventSchema?: EventSchema;
  /** CRP's token buckets: false (default) = tracked for the headers but never refused; true or options = enforced. */
  throttling?: boolean | ThrottlingOptions;
  /** Simulated seconds per real second (default 1). `throttling.timeScale` wins when both are given. */
  timeScale?: number;
  /** How `x-ms-ratelimit-remaining-resource` names CRP's buckets: "windows" (default; `<Policy>3Min` and
   *  `<Policy>30Min`, as every public sample) or "resourceSubscription" (`<Policy>Resource`,
   *  `<Policy>SubscriptionMaximum`, as earlier recordings). Applies with throttling off too (the headers are sent). */
  rateLimitPolicyNames?: PolicyNaming;
  /** Items per page of a list before a nextLink (default 100; the real page size is not documented). */
  listPageSize?: number;
  /** Status of an instance PUT: 200 (default) or 202; CRP answers either. */
  instanceWriteStatus?: 200 | 202;
  /** Scale-out gives a new instance the lowest instance ID no instance holds, reusing those of deleted instances, as
   *  Azure may (default true); false: IDs only grow. A reborn instance starts at ETag "1" with a new `vmId`. */
  reuseInstanceIds?: boolean;
  /** CRP moves a new top-level VM's ETag (a Flexible scale set's VM) once when its create ends, with no client write
   *  and no event (recorded for a VM: create answers "1", the GET after the operation "2"). A Uniform instance does not
   *  move (recorded: "1" in the VMSS VM LIST after its create ended). Default true. */
  etagBumpAfterCreate?: boolean;
  /** A PUT to an instance whose delete (or scale-in) runs: "notActive400" (default; CRP's 400 InvalidParameter "The
   *  provided instanceId N is not an active Virtual Machine Scale Set VM instanceId.", the answer recorded most) or
   *  "markedForDeletion409" (409 OperationNotAllowed "...since it is marked for deletion", also seen). A PUT to an
   *  instance that is gone answers the 400 either way; its GET answers 404. */
  deletingInstanceWrite?: "notActive400" | "markedForDeletion409";
  /** Wrap the 429 body in ARM's `{"error": ...}` envelope (default false: top-level code, as CRP's docs show it). */
  throttleBodyEnvelope?: boolean;
  /** tenantId in events (default 00000000-0000-0000-0000-000000000000). */
  tenantId?: string;
  /** Claims in events for a caller whose token is not a JWT. */
  callerClaims?: Record<string, string>;
  /** Claims in events for writes made through the control API (another writer). */
  otherWriterClaims?: Record<string, string>;
  /** Called on every event an ARM system topic would publish. */
  onEvent?: (e: EventGridEvent) => void;
  /** Hold every request body and answer against these OpenAPI definitions and record what does not fit
   *  (`control.specRecord()`); nothing is refused because of it. Default: no check. */
  specConformance?: SpecConformanceOptions;
}

export interface Settings {
  port: number;
  host: string;
  tls: boolean;
  latency: { fixedMs: number; jitterMs: number };
  randomSeed: number;
  operationDurationMs: number;
  operationRetryAfterSeconds: number;
  /** undefined: seeded random 1,000 to 5,000 ms per bump. */
  instanceWritePropagatesToScaleSetAfterMs: number | undefined;
  conflictWhileOperationInProgress: boolean;
  conflictAcrossScaleSet: boolean;
  scaleSetWriteMs: number;
  instanceWriteMs: number;
  preemptRunningOperation: boolean;
  upgradeStepMs: number;
  flexibleUpgradeRollsNetwork: boolean;
  nicWriteAsync: boolean;
  nrpTransientFailureRate: number;
  nrpRetryAfterSeconds: number;
  loadBalancerWriteMs: number;
  appGatewayWriteMs: number;
  supersedeRunningNetworkWrite: boolean;
  eventSchema: EventSchema;
  throttlingEnforced: boolean;
  armThrottling: boolean;
  refill: RefillMode;
  policyNaming: PolicyNaming;
  timeScale: number;
  listPageSize: number;
  instanceWriteStatus: 200 | 202;
  deletingInstanceWrite: "notActive400" | "markedForDeletion409";
  reuseInstanceIds: boolean;
  etagBumpAfterCreate: boolean;
  throttleBodyEnvelope: boolean;
  tenantId: string;
  callerClaims: Record<string, string>;
  otherWriterClaims: Record<string, string>;
}

export function resolveSettings(o: ArmSimulatorOptions = {}): Settings {
  const t = typeof o.throttling === "object" ? o.throttling : {};
  return {
    port: o.port ?? 0,
    host: o.host ?? "127.0.0.1",
    tls: o.tls ?? false,
    latency: o.latency ?? { fixedMs: 0, jitterMs: 0 },
    randomSeed: o.randomSeed ?? 1,
    operationDurationMs: o.operationDurationMs ?? 20,
    operationRetryAfterSeconds: o.operationRetryAfterSeconds ?? 0,
    instanceWritePropagatesToScaleSetAfterMs: o.instanceWritePropagatesToScaleSetAfterMs,
    conflictWhileOperationInProgress: o.conflictWhileOperationInProgress ?? true,
    conflictAcrossScaleSet: o.conflictAcrossScaleSet ?? true,
    scaleSetWriteMs: o.scaleSetWriteMs ?? o.operationDurationMs ?? 20,
    instanceWriteMs: o.instanceWriteMs ?? o.operationDurationMs ?? 20,
    preemptRunningOperation: o.preemptRunningOperation ?? false,
    upgradeStepMs: o.upgradeStepMs ?? 2000,
    flexibleUpgradeRollsNetwork: o.flexibleUpgradeRollsNetwork ?? false,
    nicWriteAsync: o.nicWriteAsync ?? false,
    nrpTransientFailureRate: o.nrpTransientFailureRate ?? 0,
    nrpRetryAfterSeconds: o.nrpRetryAfterSeconds ?? 10,
    loadBalancerWriteMs: o.loadBalancerWriteMs ?? o.operationDurationMs ?? 20,
    appGatewayWriteMs: o.appGatewayWriteMs ?? o.operationDurationMs ?? 20,
    supersedeRunningNetworkWrite: o.supersedeRunningNetworkWrite ?? false,
    eventSchema: o.eventSchema ?? "EventGridSchema",
    throttlingEnforced: o.throttling !== undefined && o.throttling !== false,
    armThrottling: t.arm ?? true,
    refill: t.refill ?? "perMinute",
    policyNaming: o.rateLimitPolicyNames ?? "windows",
    timeScale: t.timeScale ?? o.timeScale ?? 1,
    listPageSize: o.listPageSize ?? 100,
    instanceWriteStatus: o.instanceWriteStatus ?? 200,
    deletingInstanceWrite: o.deletingInstanceWrite ?? "notActive400",
    reuseInstanceIds: o.reuseInstanceIds ?? true,
    etagBumpAfterCreate: o.etagBumpAfterCreate ?? true,
    throttleBodyEnvelope: o.throttleBodyEnvelope ?? false,
    tenantId: o.tenantId ?? "00000000-0000-0000-0000-000000000000",
    callerClaims: o.callerClaims ?? { appid: "00000000-0000-0000-0000-00000000ca11", appidacr: "1", ver: "1.0" },
    otherWriterClaims: o.otherWriterClaims ?? {
      appid: "00000000-0000-0000-0000-0000000000e2",
      appidacr: "1",
      ver: "1.0",
    },
  };
}

/**
 * Operation duration profiles for the benchmark (operation durations are not public: recordings normalise them).
 * `standard`: every operation 2 s. `slow`: scale set and instance writes 30 s, the rest 2 s.
 */
export const OPERATION_PROFILES = {
  standard: { operationDurationMs: 2_000 },
  slow: { operationDurationMs: 2_000, scaleSetWriteMs: 30_000, instanceWriteMs: 30_000 },
} as const satisfies Record<
  string,
  Pick<ArmSimulatorOptions, "operationDurationMs" | "scaleSetWriteMs" | "instanceWriteMs">
>;
export type OperationProfile = keyof typeof OPERATION_PROFILES;
