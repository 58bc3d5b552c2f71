import type { Config } from "../config";
import type { Clock, DeclarationStore, Logger, TimerStateStore } from "../core/ports";
import type { DriftStore } from "../core/drift";
import type { TargetHistory } from "../core/history";
import type { PlanPort } from "./dryRun";
import type { StatusDeps } from "./statusReport";
import type { TargetRef } from "../core/resourceIds";
import type { Declaration } from "../core/declarations";
import type { DeclaredResult } from "../core/targetPasses";
import type { IntakeDeclare } from "./acceptDeclaration";

/**
 * What the HTTP API needs of the app, as ports the intake declares itself (the app's services satisfy it): the
 * intake sits beside the reconcile, below the composition root, and imports nothing of it.
 */
export interface IntakeServices {
  config: Config;
  clock: Clock;
  log: Logger;
  declarations: Pick<DeclarationStore, "listForTarget"> & StatusDeps["declarations"];
  cache: StatusDeps["cache"];
  problems: StatusDeps["problems"];
  queue: StatusDeps["queue"];
  timerState?: Pick<TimerStateStore, "read">;
  /** The tally of events about resources poolsync holds nothing for. */
  unheld?: StatusDeps["events"];
  /** The timer's last full census of the cache. */
  censusSummary?: StatusDeps["censusSummary"];
  /** Each declaration's most recent drift, for the memberships view and the status page. */
  drifts?: Pick<DriftStore, "listForTarget">;
  /** What a reconcile would write now (reads only): the plan route and dry runs. */
  plan?: PlanPort["plan"];
  /** Each target's timeline (GET /api/history, the status page's last entries). */
  history?: Pick<TargetHistory, "page">;
  /** Stores a declaration (batched with others of its target) and schedules its pass. */
  declare: IntakeDeclare;
  /** What storing a declaration would answer (a dry run's caps and ordering), writing nothing. */
  previewDeclare(ref: TargetRef, d: Declaration): Promise<DeclaredResult>;
  /** Creates the tables and queues if missing. */
  ready(): Promise<void>;
}

/** Storage unreachable or refusing: the caller may retry; anything else is a bug and goes to the host as a 500. */
export function isStorageFailure(err: unknown): boolean {
  const e = err as { name?: string; code?: string; statusCode?: number };
  return (
    e?.name === "RestError" ||
    ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN"].includes(e?.code ?? "") ||
    (e?.statusCode ?? 0) >= 500
  );
}
