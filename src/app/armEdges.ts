import { readFileSync } from "node:fs";
import type { Config } from "../config";
import type { Clock } from "../core/ports";
import { ArmCompute } from "../azure/compute";
import { armCredential, armScope } from "../azure/credentials";
import { ArmNetwork } from "../azure/network";
import type { ReadPacer } from "../azure/readPacing";
import type { RateLimitObservation } from "../pacing/learnWriteBudget";

/** The two ARM edges (Compute, Network) as the settings describe them, and how long a sent write may be in flight. */

/** What both ARM edges take from the settings: endpoint, credential, extra CA, timeouts, operation polling. */
export function armEdgeOptions(config: Config, clock: Clock) {
  return {
    endpoint: config.armEndpoint,
    ...(config.armCaFile ? { ca: readFileSync(config.armCaFile, "utf8") } : {}),
    credential: armCredential(config),
    scope: armScope(config.cloud),
    clock,
    requestTimeoutMs: config.armTimeoutMs,
    operationMaxWaitMs: config.operationMaxWaitMs,
    operationPollIntervalMs: config.operationPollMs,
  };
}

/** The Network edge (NICs), on the same endpoint and settings as the Compute edge, sharing its read pacing. */
export function armNetworkFromConfig(config: Config, clock: Clock, readPacer?: ReadPacer): ArmNetwork {
  return new ArmNetwork({ ...armEdgeOptions(config, clock), ...(readPacer ? { readPacer } : {}) });
}

/** The Compute edge as the settings describe it. */
export function armComputeFromConfig(
  config: Config,
  clock: Clock,
  readPacer?: ReadPacer,
  onRateLimit?: (o: RateLimitObservation) => void,
): ArmCompute {
  return new ArmCompute({
    ...armEdgeOptions(config, clock),
    ...(readPacer ? { readPacer } : {}),
    pacing: config.pacingEnabled,
    pacingMaxWaitMs: config.pacingMaxWaitMs,
    ...(onRateLimit ? { onRateLimit } : {}),
  });
}

/**
 * The longest a sent ARM write may take to reach ARM, on the app's clock: the request timeout (real time). A pass
 * writes only with that much of its lease left (LeaseGuard), so a lease shorter than two of them would stop every write.
 */
export function checkedWriteFlight(config: Config, timeScale: number): number {
  const flightMs = config.armTimeoutMs * timeScale;
  if (config.reconcileLeaseMs < 2 * flightMs)
    throw new Error(
      `POOLSYNC_RECONCILE_LEASE_SECONDS: ${config.reconcileLeaseMs / 1000} s is shorter than twice the ARM request timeout ` +
        `(POOLSYNC_ARM_TIMEOUT_SECONDS, ${flightMs / 1000} s on this clock): a pass writes only with a timeout's worth of lease left`,
    );
  return flightMs;
}
