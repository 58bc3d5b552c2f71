import { closeWindow, renewLease, takeLease } from "../../core/control";
import type { TargetRef } from "../../core/resourceIds";
import { TargetConflict } from "./commitTarget";
import type { ControlHandle } from "./passWrites";
import type { TargetSnapshot } from "./readTarget";
import type { TargetStore } from "./targetStore";

/** What taking a target's reconcile lease found. */
export type TargetLeaseTake =
  /** The partition as read under the lease (window closed when asked), and the control row as written. */
  | { kind: "acquired"; snapshot: TargetSnapshot; control: ControlHandle; handover?: string }
  /** Another holder runs: another pass is now asked of it. `firstToAsk`: nobody had asked since its pass began. */
  | { kind: "held"; firstToAsk: boolean; expiresAt: number };

const MAX_TRIES = 8;

/**
 * One reconcile of a target at a time across every host, in the target's control row. Taking it is one read of the
 * partition and one conditional write of the control row: when that write lands, nothing about the target changed
 * since the read (every declaration's change writes the control row too), so the pass works from what it read.
 */
export class TargetLeases {
  constructor(private readonly store: TargetStore) {}

  /**
   * `close`: a pass about to read the declarations closes the declare window in the same write, so a declaration
   * stored after it opens a new window (and one stored before it is in what was read).
   */
  async acquire(
    ref: TargetRef,
    holder: string,
    ttlMs: number,
    fresh: boolean,
    close: boolean,
  ): Promise<TargetLeaseTake> {
    for (let attempt = 0; ; attempt++) {
      const snapshot = await this.store.readTarget(ref);
      const now = this.store.now();
      const take = takeLease(snapshot.control, holder, now, ttlMs, fresh);
      try {
        if (take.kind === "held") {
          if (take.changed)
            await this.store.commit(snapshot.partitionKey, [], { state: take.state, base: snapshot.controlEtag });
          return { kind: "held", firstToAsk: take.firstToAsk, expiresAt: take.expiresAt };
        }
        const state = close ? closeWindow(take.state) : take.state;
        const written = await this.store
          .commit(snapshot.partitionKey, [], { state, base: snapshot.controlEtag })
          .catch((err: unknown) => this.landedAnyway(ref, holder, err));
        if ("snapshot" in written) return written;
        const etag = written.control;
        return {
          kind: "acquired",
          snapshot: { ...snapshot, control: state, controlEtag: etag },
          control: { state, etag },
          ...(take.handover ? { handover: take.handover } : {}),
        };
      } catch (err) {
        if (!(err instanceof TargetConflict) || attempt + 1 >= MAX_TRIES) throw err;
      }
    }
  }

  /**
   * A lease write whose answer never came (the client's timeout, a 5xx after the SDK's retries) may have landed:
   * read the partition back, and if the lease is ours it did, so the pass goes on with what it reads now instead of
   * leaving a lease nobody holds to run out. Anything else is the write's own error (TargetConflict: lost the race).
   */
  private async landedAnyway(
    ref: TargetRef,
    holder: string,
    err: unknown,
  ): Promise<TargetLeaseTake & { kind: "acquired" }> {
    if (err instanceof TargetConflict) throw err;
    const snapshot = await this.store.readTarget(ref).catch(() => {
      throw err;
    });
    if (snapshot.control.lease.holder !== holder || snapshot.control.lease.expiresAt <= this.store.now()) throw err;
    return {
      kind: "acquired",
      snapshot,
      control: { state: snapshot.control, etag: snapshot.controlEtag },
      ...(snapshot.control.lease.handover ? { handover: snapshot.control.lease.handover } : {}),
    };
  }

  /** Pushes the expiry on, keeping `control` current; false when the lease is no longer ours. */
  async renew(ref: TargetRef, holder: string, ttlMs: number, control: ControlHandle): Promise<boolean> {
    const { result, handle } = await this.store.updateControl(
      ref,
      (s) => {
        const next = renewLease(s, holder, this.store.now(), ttlMs);
        return { state: next, result: next !== undefined };
      },
      control,
    );
    control.state = handle.state;
    control.etag = handle.etag;
    return result;
  }
}
