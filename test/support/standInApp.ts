/**
 * A stand-in for `@azure/functions`' `app.hook` (the modules that register hooks take "the part of app they need"): it
 * keeps each registered hook, and `run` plays them as the worker does.
 */
export type HookName = "preInvocation" | "postInvocation" | "appTerminate";

export function standInApp() {
  const registered = new Map<HookName, Array<(context: never) => unknown>>();
  const register = (name: HookName) => (handler: (context: never) => unknown) => {
    registered.set(name, [...(registered.get(name) ?? []), handler]);
  };
  return {
    hook: {
      preInvocation: register("preInvocation"),
      postInvocation: register("postInvocation"),
      appTerminate: register("appTerminate"),
    },
    /** Runs every hook registered under `name` with `context`, in order. */
    async run(name: HookName, context: unknown): Promise<void> {
      for (const h of registered.get(name) ?? []) await h(context as never);
    },
  };
}
