// The ARM Compute simulator: start it in-process with startArmSimulator(), or from the command line (cli.ts).
// See README.md for its settings, the control API and the /_sim/ endpoints.
import { readFileSync } from "node:fs";
import path from "node:path";
import { createControl, type SimControl } from "./control";
import { createCore } from "./core";
import { listen, TLS_DIR } from "./http/server";
import { resolveSettings, type ArmSimulatorOptions } from "./options";

export type { ArmSimulatorOptions, ThrottlingOptions, OperationProfile } from "./options";
export { OPERATION_PROFILES } from "./options";
export type { SimControl, SimClockView } from "./control";
export type {
  SeedSpec,
  ScaleSetSeed,
  NicSeed,
  IpConfigurationSeed,
  LoadBalancerSeed,
  VirtualNetworkSeed,
} from "./seed";
export { DEMO_SEED, DEMO_SUBSCRIPTION } from "./seed";
export type { EventGridEvent, ArmEventData, ArmEventType } from "./events";
export type { FaultRule, FaultHandle } from "./faults";
export type { InterleaveHandle, Mutation } from "./interleave";
export type { StatsCounters } from "./stats";
export type { Operation, OperationStatus } from "./operations";
export type { Json, JsonObject } from "./json";
export type { SpecConformanceOptions, SpecOperation, SpecRecord, SpecViolation } from "./specConformance";

export interface ArmSimulator {
  /** Base URL, e.g. http://127.0.0.1:18443 (https:// with `tls: true`). */
  url: string;
  /** PEM of the certificate the simulator serves with `tls: true` (give it to the client as its CA). */
  ca?: string;
  control: SimControl;
  stop(): Promise<void>;
}

export async function startArmSimulator(opts: ArmSimulatorOptions = {}): Promise<ArmSimulator> {
  const settings = resolveSettings(opts);
  const core = createCore(settings, opts.specConformance);
  const control = createControl(core);
  if (opts.onEvent) control.onEvent(opts.onEvent);
  if (opts.seed) control.seed(opts.seed);
  const server = await listen(core, control);
  return {
    url: server.url,
    ...(settings.tls ? { ca: readFileSync(path.join(TLS_DIR, "cert.pem"), "utf8") } : {}),
    control,
    stop: async () => {
      core.clock.stop();
      await server.close();
    },
  };
}
