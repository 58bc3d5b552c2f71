import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The invocation a piece of code runs in, without passing it by hand: the preInvocation hook
 * (src/app/invocationHook.ts) runs each handler inside `runInInvocation`, and the logger asks `currentInvocation()` for
 * the id and the invocation's own log methods, so deep code's lines (the `arm.write` audit line among them) belong to
 * their invocation.
 */

export type LogLevel = "info" | "warn" | "error";

export interface InvocationScope {
  invocationId: string;
  functionName: string;
  /** The invocation's own log (InvocationContext.log/warn/error): the host records it against the invocation. */
  write?: (level: LogLevel, line: string) => void;
}

const storage = new AsyncLocalStorage<InvocationScope>();

export const currentInvocation = (): InvocationScope | undefined => storage.getStore();

export function runInInvocation<T>(scope: InvocationScope, fn: () => T): T {
  return storage.run(scope, fn);
}
