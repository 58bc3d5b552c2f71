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
): Promise<RpcInvocationResponse> {
  const model = currentProgrammingModel();
  if (!model)
    throw new Error(`No programming model was set; was "${fn.metadata.name}" registered through @azure/functions?`);
  const invocationId = randomUUID();
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
