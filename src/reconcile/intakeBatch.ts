import type { Declaration } from "../core/declarations";
import type { Logger, WorkQueue } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import type { DeclaredResult, TargetIntake, WindowRequest } from "../core/targetPasses";
import { joinableMs, quietMs, scheduleClaim, type Scheduled } from "./declareWindow";

/** One declaration as it comes in (a queue message, an HTTP request), and how its pass is to run. */
export interface DeclareRequest {
  ref: TargetRef;
  declaration: Declaration;
  /** The same on a redelivery (the queue message id, the request id), so a lost enqueue is redone. */
  claimant: string;
  reason: string;
  /** The caller runs a leading pass itself (the queue trigger, in the same invocation). */
  runsLeading: boolean;
  /** The caller's host is busy with this target or a backlog: nothing it declares leads. */
  busy: boolean;
}

/**
 * What came of it. `scheduled`: how its pass runs ("leading": this caller runs it now; undefined: nothing to run,
 * the declaration was older, refused, or already applied).
 */
export type DeclareAnswer = DeclaredResult & { scheduled?: Scheduled };

interface Waiting {
  req: DeclareRequest;
  resolve: (a: DeclareAnswer) => void;
  reject: (err: unknown) => void;
}

/**
 * The declarations of one target that reach this process in the same turn of the event loop (a batch of queue
 * messages, parallel requests) are stored in one transaction with the target's control row and scheduled once: one
 * pass for them all, one leader at most. Across processes the control row's ETag orders them.
 */
export class IntakeBatcher {
  private readonly pending = new Map<string, Waiting[]>();
  /** Targets with a batch being stored: what arrives meanwhile waits for it, then goes as the next batch. */
  private readonly storing = new Set<string>();

  constructor(
    private readonly intake: TargetIntake,
    private readonly deps: { queue: WorkQueue; windowMs: number; log: Logger },
  ) {}

  declare(req: DeclareRequest): Promise<DeclareAnswer> {
    return new Promise<DeclareAnswer>((resolve, reject) => {
      const key = req.ref.key;
      let group = this.pending.get(key);
      if (!group) {
        group = [];
        this.pending.set(key, group);
        // One batch of a target at a time in this process: its transactions never race each other.
        if (!this.storing.has(key)) setImmediate(() => this.next(key));
      }
      group.push({ req, resolve, reject });
    });
  }

  private next(key: string): void {
    const group = this.pending.get(key);
    if (!group) return;
    this.pending.delete(key);
    this.storing.add(key);
    void this.flush(group).finally(() => {
      this.storing.delete(key);
      if (this.pending.has(key)) this.next(key);
    });
  }

  private async flush(group: Waiting[]): Promise<void> {
    const first = group[0]!.req;
    const { windowMs } = this.deps;
    const busy = group.some((w) => w.req.busy);
    const window: WindowRequest | undefined =
      windowMs > 0
        ? { windowMs, joinableMs: joinableMs(windowMs), quietMs: busy ? Number.POSITIVE_INFINITY : quietMs(windowMs) }
        : undefined;
    let out;
    try {
      out = await this.intake.declareBatch(
        first.ref,
        group.map((w) => ({ declaration: w.req.declaration, claimant: w.req.claimant })),
        window,
      );
    } catch (err) {
      for (const w of group) w.reject(err);
      return;
    }
    const results = out.results;
    const wants = (r: DeclaredResult) =>
      r.result === "created" ||
      r.result === "updated" ||
      (r.result === "unchanged" && r.stored.outcome.kind !== "applied");
    const served = group.filter((_, i) => wants(results[i]!));
    // The one caller that runs a leading pass itself: the first that can.
    const leader = served.find((w) => w.req.runsLeading);
    let scheduled: Scheduled | undefined;
    let scheduleFailed: unknown;
    try {
      if (served.length > 0) {
        if (!window) {
          // No window: the caller that can runs the pass at once; else the queue brings it.
          if (!leader) await this.deps.queue.enqueueReconcile(first.ref.id, served[0]!.req.reason);
          scheduled = leader ? "leading" : "scheduled";
        } else if (out.claim)
          scheduled = await scheduleClaim(first.ref, out.claim, served[0]!.req.reason, {
            queue: this.deps.queue,
            windowMs,
            busy,
            runsLeading: leader !== undefined,
          });
      }
    } catch (err) {
      // Stored, not scheduled. A queue message fails, so that its redelivery (the same claimant) enqueues again; an
      // HTTP caller is told its declaration is stored but not queued (the timer asks for a pass of one left pending).
      scheduleFailed = err;
      this.deps.log.warn("intake.enqueue-failed", { scaleSetId: first.ref.id, error: (err as Error).message });
    }
    const opener = served[0];
    group.forEach((w, i) => {
      const r = results[i]!;
      if (scheduleFailed !== undefined && w.req.runsLeading && wants(r)) return w.reject(scheduleFailed);
      if (!wants(r) || scheduled === undefined) return w.resolve(r);
      // One caller leads (runs the pass) or opened the window (enqueued it); the others' declarations join it.
      const mine: Scheduled =
        scheduled === "leading" ? (w === leader ? "leading" : "joined") : w === opener ? scheduled : "joined";
      w.resolve({ ...r, scheduled: mine });
    });
  }
}
