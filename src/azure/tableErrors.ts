import { RestError } from "@azure/data-tables";

/** The HTTP status of a failed Table call (undefined when it never got an answer). */
export function statusOf(err: unknown): number | undefined {
  return err instanceof RestError ? err.statusCode : (err as { statusCode?: number } | undefined)?.statusCode;
}

/** Runs a Table call whose 404 means "already as wanted" (a delete of a row that is gone). */
export async function unless404(call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (err) {
    if (statusOf(err) !== 404) throw err;
  }
}
