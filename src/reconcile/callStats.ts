import type { ComputePort, NetworkPort } from "../core/ports";
import { PreconditionFailedError, throttledByArm } from "../core/errors";

/** ARM calls one reconcile made, for its log line and for tests that count calls. */
export class CallStats {
  reads = 0;
  writes = 0;
  preconditionFailures = 0;
  throttles = 0;
  /** Calls by port method (one LIST page is one call): what the reads were spent on. */
  readonly byCall: Record<string, number> = {};

  /** A view of the port that counts every call made through it. */
  wrap(port: ComputePort): ComputePort {
    const count = this.counter();
    return {
      getScaleSet: (ref) => count("reads", () => port.getScaleSet(ref), "getScaleSet"),
      listScaleSetsPage: (scope, nextLink) =>
        count("reads", () => port.listScaleSetsPage(scope, nextLink), "listScaleSetsPage"),
      listInstances: (ref) => count("reads", () => port.listInstances(ref), "listInstances"),
      getInstance: (ref) => count("reads", () => port.getInstance(ref), "getInstance"),
      writeScaleSetNics: (ref, base, nics, opts) =>
        count("writes", () => port.writeScaleSetNics(ref, base, nics, opts), "writeScaleSetNics"),
      writeInstanceNics: (ref, base, nics, opts) =>
        count("writes", () => port.writeInstanceNics(ref, base, nics, opts), "writeInstanceNics"),
      getVm: (ref) => count("reads", () => port.getVm(ref), "getVm"),
      listVms: (scope) => count("reads", () => port.listVms(scope), "listVms"),
    };
  }

  wrapNetwork(port: NetworkPort): NetworkPort {
    const count = this.counter();
    return {
      getNic: (ref) => count("reads", () => port.getNic(ref)),
      writeNic: (ref, base, ipcs, opts) => count("writes", () => port.writeNic(ref, base, ipcs, opts)),
      getBackendPool: (ref) => count("reads", () => port.getBackendPool(ref), "getBackendPool"),
      writeBackendPool: (ref, base, addresses, opts) =>
        count("writes", () => port.writeBackendPool(ref, base, addresses, opts), "writeBackendPool"),
      listScaleSetNics: (ref) => count("reads", () => port.listScaleSetNics(ref), "listScaleSetNics"),
    };
  }

  private counter() {
    return async <T>(kind: "reads" | "writes", call: () => Promise<T>, name?: string): Promise<T> => {
      this[kind]++;
      if (name) this.byCall[name] = (this.byCall[name] ?? 0) + 1;
      try {
        return await call();
      } catch (err) {
        if (err instanceof PreconditionFailedError) this.preconditionFailures++;
        if (throttledByArm(err)) this.throttles++;
        throw err;
      }
    };
  }
}
