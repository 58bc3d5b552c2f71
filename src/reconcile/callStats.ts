import type { ComputePort, NetworkPort } from "../core/ports";
import { PreconditionFailedError, ThrottledError } from "../core/errors";

/** ARM calls one reconcile made, for its log line and for tests that count calls. */
export class CallStats {
  reads = 0;
  writes = 0;
  preconditionFailures = 0;
  throttles = 0;

  /** A view of the port that counts every call made through it. */
  wrap(port: ComputePort): ComputePort {
    const count = this.counter();
    return {
      getScaleSet: (ref) => count("reads", () => port.getScaleSet(ref)),
      listInstances: (ref) => count("reads", () => port.listInstances(ref)),
      getInstance: (ref) => count("reads", () => port.getInstance(ref)),
      writeScaleSetNics: (ref, base, nics, opts) => count("writes", () => port.writeScaleSetNics(ref, base, nics, opts)),
      writeInstanceNics: (ref, base, nics, opts) => count("writes", () => port.writeInstanceNics(ref, base, nics, opts)),
      getVm: (ref) => count("reads", () => port.getVm(ref)),
      listVms: (scope) => count("reads", () => port.listVms(scope)),
    };
  }

  wrapNetwork(port: NetworkPort): NetworkPort {
    const count = this.counter();
    return {
      getNic: (ref) => count("reads", () => port.getNic(ref)),
      writeNic: (ref, base, ipcs, opts) => count("writes", () => port.writeNic(ref, base, ipcs, opts)),
    };
  }

  private counter() {
    return async <T>(kind: "reads" | "writes", call: () => Promise<T>): Promise<T> => {
      this[kind]++;
      try {
        return await call();
      } catch (err) {
        if (err instanceof PreconditionFailedError) this.preconditionFailures++;
        if (err instanceof ThrottledError) this.throttles++;
        throw err;
      }
    };
  }
}
