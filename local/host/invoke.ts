import { randomUUID } from "node:crypto";
import { appHookData, currentProgrammingModel, registeredHooks, type CapturedFunction } from "./coreStandIn";
import type {
  CoreInvocationContext,
  InvocationState,
  RpcInvocationRequest,
  RpcInvocationResponse,
  RpcLogCategory,
  RpcLogLevel,
  RpcParameterBinding,
  RpcTypedData,
} from "./coreTypes";

/** What a trigger hands the worker for one invocation: the host's `InvocationRequest` minus ids. */
export interface InvocationInput {
  /** The trigger binding's payload (and any extra inputs), keyed by binding name, as the host encodes them. */
  inputData: RpcParameterBinding[];
  triggerMetadata?: Record<string, RpcTypedData>;
  retryContext?: RpcInvocationRequest["retryContext"];
}

export interface InvocationLog {
  functionName: string;
  invocationId: string;
  level: RpcLogLevel;
  category: RpcLogCategory;
  message: string;
}

export type InvocationLogger = (entry: InvocationLog) => void;

/**
 * Runs one invocation the way the Node.js worker's InvocationHandler does: the programming model the library set
 * (`@azure/functions`' ProgrammingModel) makes an InvocationModel for the request; `getArguments` turns the host's
 * typed data into the `InvocationContext` and trigger input; preInvocation hooks; `invokeFunction`; postInvocation
 * hooks; and `getResponse` turns the handler's result back into host typed data. A handler error is rethrown
 * after the postInvocation hooks saw it (and could have replaced it), as the worker does.
 */
export async function invokeCaptured(
  fn: CapturedFunction,
  input: InvocationInput,
  log: InvocationLogger,
  timeoutMs?: number,
): Promise<RpcInvocationResponse> {
  const invocationId = randomUUID();
  const running = runInvocation(fn, input, log, invocationId);
  if (timeoutMs === undefined) return running;
  return withFunctionTimeout(running, timeoutMs, fn.metadata.name, invocationId, log);
}

/** What a caller of an invocation past `functionTimeout` gets: the host's FunctionTimeoutException, by message. */
export class FunctionTimeoutError extends Error {
  override name = "FunctionTimeoutError";
}

/**
 * host.json's `functionTimeout`, as the host enforces it: past the timeout the invocation fails (a queue message is
 * released and counts a dequeue, an HTTP caller gets 500, Event Grid's delivery fails and is retried) and nothing
 * waits for it any longer, shutdown included. The host then restarts the language worker, which kills the code;
 * this runtime shares its process with the app and cannot, so the code runs on unheard: its result and its error
 * are dropped.
 */
function withFunctionTimeout<T>(
  running: Promise<T>,
  timeoutMs: number,
  functionName: string,
  invocationId: string,
  log: InvocationLogger,
): Promise<T> {
  running.catch(() => undefined); // after the timeout nobody listens: a late failure must not be unhandled
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const limit = formatTimeSpan(timeoutMs);
      log({
        functionName,
        invocationId,
        level: "error",
        category: "system",
        message: `Timeout value of ${limit} exceeded by function 'Functions.${functionName}' (Id: '${invocationId}'). Initiating cancellation.`,
      });
      reject(new FunctionTimeoutError(`Timeout value of ${limit} was exceeded by function: Functions.${functionName}`));
    }, timeoutMs);
  });
  return Promise.race([running, timedOut]).finally(() => clearTimeout(timer));
}

/** Milliseconds as the host prints a TimeSpan: `hh:mm:ss`, with `.fff` only when there is a fraction. */
export function formatTimeSpan(ms: number): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  const s = Math.floor(ms / 1000);
  const frac = ms % 1000 ? `.${String(ms % 1000).padStart(3, "0")}` : "";
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}${frac}`;
}

async function runInvocation(
  fn: CapturedFunction,
  input: InvocationInput,
  log: InvocationLogger,
  invocationId: string,
): Promise<RpcInvocationResponse> {
  const model = currentProgrammingModel();
  if (!model)
    throw new Error(`No programming model was set; was "${fn.metadata.name}" registered through @azure/functions?`);
  const functionName = fn.metadata.name;
  const request: RpcInvocationRequest = {
    invocationId,
    functionId: fn.metadata.functionId,
    inputData: input.inputData,
    triggerMetadata: input.triggerMetadata ?? {},
    retryContext: input.retryContext ?? null,
    traceContext: { traceParent: null, traceState: null, attributes: {} },
  };
  const coreCtx: CoreInvocationContext & { state?: InvocationState } = {
    invocationId,
    request,
    metadata: fn.metadata,
    state: undefined,
    log: (level, category, message) => log({ functionName, invocationId, level, category, message }),
  };

  const invocationModel = await model.getInvocationModel(coreCtx);
  const { context, inputs: initialInputs } = await invocationModel.getArguments();
  const hookData: Record<string, unknown> = {};
  const preContext = {
    hookData,
    appHookData: appHookData(),
    invocationContext: context,
    functionCallback: fn.callback,
    inputs: initialInputs,
  };
  coreCtx.state = "preInvocationHooks";
  try {
    for (const hook of registeredHooks("preInvocation")) await hook(preContext);
  } finally {
    coreCtx.state = undefined;
  }

  const postContext = {
    hookData,
    appHookData: appHookData(),
    invocationContext: context,
    inputs: preContext.inputs,
    result: null as unknown,
    error: null as unknown,
  };
  coreCtx.state = "invocation";
  try {
    postContext.result = await invocationModel.invokeFunction(context, preContext.inputs, preContext.functionCallback);
  } catch (err) {
    postContext.error = err;
  } finally {
    coreCtx.state = undefined;
  }

  coreCtx.state = "postInvocationHooks";
  try {
    for (const hook of registeredHooks("postInvocation")) await hook(postContext);
  } finally {
    coreCtx.state = undefined;
  }
  if (postContext.error) throw postContext.error;
  return invocationModel.getResponse(context, postContext.result);
}
