import type { Services } from "../app/services";

/** The part of the app's services the HTTP API uses; a narrow type so tests can see what it touches. */
export type IntakeServices = Pick<Services, "config" | "clock" | "log" | "declarations" | "cache" | "problems" | "queue" | "scheduleDeclared" | "ready"> &
  Partial<Pick<Services, "timerState">>;

/** Storage unreachable or refusing: the caller may retry; anything else is a bug and goes to the host as a 500. */
export function isStorageFailure(err: unknown): boolean {
  const e = err as { name?: string; code?: string; statusCode?: number };
  return (
    e?.name === "RestError" || ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN"].includes(e?.code ?? "") || (e?.statusCode ?? 0) >= 500
  );
}
