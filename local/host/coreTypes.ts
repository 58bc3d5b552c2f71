/**
 * The contract between `@azure/functions` and the module the Functions Node.js worker gives it as
 * `@azure/functions-core` (worker repo: types-core/index.d.ts). That module exists only inside the worker, so no
 * package ships these types; this file restates the subset the library uses, with the same names, so the stand-in
 * and the invocation path below type-check against the shapes the library really sends and expects.
 */

export type RpcBindingDirection = "in" | "out" | "inout";

/** One binding as `toCoreFunctionMetadata` builds it: type/direction plus the trigger's own options, flattened. */
export interface RpcBindingInfo {
  type?: string | null;
  direction?: RpcBindingDirection | null;
  dataType?: string | null;
  [option: string]: unknown;
}

export interface CoreFunctionMetadata {
  name: string;
  functionId?: string;
  bindings: Record<string, RpcBindingInfo>;
  retryOptions?: unknown;
}

export type FunctionCallback = (...args: unknown[]) => unknown;

export interface RpcHttpData {
  method?: string | null;
  url?: string | null;
  headers?: Record<string, string> | null;
  body?: RpcTypedData | null;
  params?: Record<string, string> | null;
  statusCode?: string | null;
  query?: Record<string, string> | null;
  enableContentNegotiation?: boolean | null;
  cookies?: RpcHttpCookie[] | null;
}

export interface RpcHttpCookie {
  name?: string | null;
  value?: string | null;
  domain?: { value?: string | null } | null;
  path?: { value?: string | null } | null;
  expires?: { value?: number | null } | null;
  secure?: { value?: boolean | null } | null;
  httpOnly?: { value?: boolean | null } | null;
  sameSite?: "none" | "lax" | "strict" | "explicitNone" | null;
  maxAge?: { value?: number | null } | null;
}

export interface RpcTypedData {
  string?: string | null;
  json?: string | null;
  bytes?: Uint8Array | null;
  stream?: Uint8Array | null;
  http?: RpcHttpData | null;
  int?: number | null;
  double?: number | null;
}

export interface RpcParameterBinding {
  name?: string | null;
  data?: RpcTypedData | null;
}

export interface RpcInvocationRequest {
  invocationId?: string | null;
  functionId?: string | null;
  inputData?: RpcParameterBinding[] | null;
  triggerMetadata?: Record<string, RpcTypedData> | null;
  traceContext?: {
    traceParent?: string | null;
    traceState?: string | null;
    attributes?: Record<string, string> | null;
  } | null;
  retryContext?: { retryCount?: number | null; maxRetryCount?: number | null; exception?: unknown } | null;
}

export interface RpcInvocationResponse {
  invocationId?: string | null;
  outputData?: RpcParameterBinding[] | null;
  returnValue?: RpcTypedData | null;
}

/** The function metadata the worker hands the invocation model (what it also sends the host). */
export interface RpcFunctionMetadata {
  name?: string | null;
  functionId?: string | null;
  bindings?: Record<string, RpcBindingInfo> | null;
  rawBindings?: string[] | null;
  scriptFile?: string | null;
  retryOptions?: unknown;
}

export type RpcLogLevel = "trace" | "debug" | "information" | "warning" | "error" | "critical" | "none";
export type RpcLogCategory = "user" | "system" | "customMetric";
export type InvocationState = "preInvocationHooks" | "postInvocationHooks" | "invocation";

export interface CoreInvocationContext {
  invocationId: string;
  request: RpcInvocationRequest;
  metadata: RpcFunctionMetadata;
  state?: InvocationState;
  log(level: RpcLogLevel, category: RpcLogCategory, message: string): void;
}

export interface InvocationArguments {
  context: unknown;
  inputs: unknown[];
}

export interface InvocationModel {
  getArguments(): Promise<InvocationArguments>;
  invokeFunction(context: unknown, inputs: unknown[], callback: FunctionCallback): Promise<unknown>;
  getResponse(context: unknown, result: unknown): Promise<RpcInvocationResponse>;
}

export interface ProgrammingModel {
  name: string;
  version: string;
  getInvocationModel(coreContext: CoreInvocationContext): InvocationModel | Promise<InvocationModel>;
}

export type HookCallback = (context: Record<string, unknown>) => void | Promise<void>;

export interface Disposable {
  dispose(): unknown;
}
