/** The local Functions runtime: what `npm run local` and the tests use. */
export {
  startLocalRuntime,
  describeFunctions,
  type LocalRuntime,
  type LocalRuntimeOptions,
  type RuntimeFunction,
} from "./runtime";
export {
  loadRegisteredFunctions,
  type RegisteredFunction,
  type TriggerBinding,
  type LoadOptions,
} from "./loadFunctions";
export { installCoreStandIn } from "./coreStandIn";
export { parseSchedule, nextOccurrence, nextOccurrences } from "./ncrontab";
export type { InvocationInput } from "./invoke";
