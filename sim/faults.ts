// Fault injection: the next N requests matching a method and path pattern get an answer of the test's choice, lose
// their connection, are delayed past the client's timeout, are processed and then lose their answer, or are answered
// without an ETag.
import { CONCURRENT_REQUEST_MESSAGE } from "./errors";
import type { Json } from "./json";

export interface FaultRule {
  /** HTTP method to match; any when omitted. */
  method?: string;
  /** Matched against the URL path (no query). A string is a regular expression, case-insensitive. */
  path: RegExp | string;
  /** How many matching requests to fault; 1 when omitted, Infinity for all. */
  times?: number;
  /** Status to answer. Defaults: 429 when retryAfterSeconds is set, else 500 (unless drop or delay-only). */
  status?: number;
  /** Body to answer; a default ARM error body for the status when omitted. */
  body?: Json;
  headers?: Record<string, string>;
  /** Sets Retry-After (simulated seconds); implies status 429 with CRP's throttling body unless told otherwise. */
  retryAfterSeconds?: number;
  /** Destroy the connection instead of answering. */
  drop?: boolean;
  /** Wait this many simulated ms first. Alone, the request is then handled normally (a slow answer). */
  delayMs?: number;
  /** Process the request for real (the write happens), then lose the answer: drop, or answer `status`. */
  afterWrite?: boolean;
  /** Handle the request normally but answer without an ETag (header and body), at any api-version. */
  stripEtag?: boolean;
}

export interface FaultAnswer {
  status: number;
  body: Json;
  headers: Record<string, string>;
}

/** What to do with a request that matched a fault. */
export interface FaultPlan {
  delayMs: number;
  /** Before handling: answer this / drop. After handling (afterWrite): replace the answer / drop. */
  answer?: FaultAnswer;
  drop: boolean;
  afterWrite: boolean;
  stripEtag: boolean;
}

export interface FaultHandle {
  remaining(): number;
  cancel(): void;
}

interface ActiveFault {
  rule: FaultRule;
  pattern: RegExp;
  left: number;
}

export function defaultFaultBody(status: number): Json {
  if (status === 429)
    return {
      code: "OperationNotAllowed",
      message: "The server rejected the request because too many requests have been received for this subscription.",
      details: [{ code: "TooManyRequests", target: "InjectedFault", message: '{"operationGroup":"InjectedFault"}' }],
    };
  if (status === 409) return { error: { code: "Conflict", message: CONCURRENT_REQUEST_MESSAGE } };
  if (status === 503)
    return { error: { code: "ServiceUnavailable", message: "The service is unavailable (injected fault)." } };
  return { error: { code: "InternalServerError", message: "An internal server error occurred (injected fault)." } };
}

export class Faults {
  private active: ActiveFault[] = [];

  add(rule: FaultRule): FaultHandle {
    const pattern = typeof rule.path === "string" ? new RegExp(rule.path, "i") : rule.path;
    const f: ActiveFault = { rule, pattern, left: rule.times ?? 1 };
    this.active.push(f);
    return {
      remaining: () => f.left,
      cancel: () => {
        this.active = this.active.filter((x) => x !== f);
      },
    };
  }

  clear(): void {
    this.active = [];
  }

  /** The first rule matching this request, consumed once; undefined when none matches. */
  take(method: string, path: string): FaultPlan | undefined {
    const f = this.active.find(
      (x) => x.left > 0 && (!x.rule.method || x.rule.method.toUpperCase() === method) && x.pattern.test(path),
    );
    if (!f) return undefined;
    f.left--;
    if (f.left <= 0) this.active = this.active.filter((x) => x !== f);
    const r = f.rule;
    const status = r.status ?? (r.retryAfterSeconds !== undefined ? 429 : undefined);
    const headers = {
      ...(r.retryAfterSeconds !== undefined ? { "retry-after": String(r.retryAfterSeconds) } : {}),
      ...r.headers,
    };
    const delayOnly =
      status === undefined && !r.drop && !r.afterWrite && (r.delayMs !== undefined || r.stripEtag === true);
    const answer =
      delayOnly || (r.drop && status === undefined) || (r.afterWrite && status === undefined)
        ? undefined
        : { status: status ?? 500, body: r.body ?? defaultFaultBody(status ?? 500), headers };
    return {
      delayMs: r.delayMs ?? 0,
      answer,
      drop: answer === undefined && !delayOnly,
      afterWrite: r.afterWrite ?? false,
      stripEtag: r.stripEtag ?? false,
    };
  }
}
