import type { StoredDeclaration } from "../core/declarations";
import {
  driftKey,
  driftOf,
  findDrift,
  type DriftFinding,
  type DriftStore,
  type LastWriters,
  type ObservedResource,
} from "../core/drift";
import type { PoolIntent } from "../core/networkProfile";
import type { PassEvents } from "../core/history";
import type { Clock, DeclarationStore, Logger } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import { mapLimit } from "../core/retryPolicy";
import type { VmNicResult } from "./vmNics";

/**
 * One reconcile's eye for drift: what it read before writing is compared with what its applied declarations hold
 * (`observe`), and at the end of the pass each drift is attributed to the last foreign writer of its resource, marked
 * repaired when the pass left its declaration applied, stored on the declaration, logged and told to the target's
 * history (`settle`). A pass that
 * finds none costs nothing: no Table call.
 */

export interface DriftDeps {
  writers: LastWriters;
  drifts: DriftStore;
}

export class DriftWatch {
  /** Each drifted declaration's first finding, and when it was seen (before the pass wrote the repair). */
  private readonly findings = new Map<string, DriftFinding & { seenAt: number }>();

  constructor(
    private readonly target: TargetRef,
    private readonly declarations: readonly StoredDeclaration[],
    private readonly intents: readonly PoolIntent[],
    private readonly deps: {
      drift?: DriftDeps | undefined;
      declarations: Pick<DeclarationStore, "listForTarget">;
      clock: Clock;
      log: Logger;
      events?: PassEvents | undefined;
    },
  ) {}

  /** Resources as read before this pass wrote them. */
  observe(resources: readonly ObservedResource[]): void {
    if (!this.deps.drift) return;
    for (const f of findDrift(this.declarations, this.intents, resources)) {
      const key = driftKey(f.declaration);
      if (!this.findings.has(key)) this.findings.set(key, { ...f, seenAt: this.deps.clock.now() });
    }
  }

  /** `ended`: the pass ended well (its outcomes recorded); only then may a drift be repaired. */
  async settle(ended: boolean): Promise<void> {
    const drift = this.deps.drift;
    if (!drift || this.findings.size === 0) return;
    const applied = ended ? await this.appliedNow() : new Set<string>();
    await mapLimit([...this.findings.values()], 8, async (f) => {
      const writer =
        (await drift.writers.read(f.resourceId)) ??
        (f.resourceId.toLowerCase() !== this.target.id.toLowerCase()
          ? await drift.writers.read(this.target.id)
          : undefined);
      const d = driftOf(f, writer, f.seenAt);
      if (applied.has(driftKey(f.declaration))) d.repairedAt = new Date(this.deps.clock.now()).toISOString();
      await drift.drifts.record(this.target, driftKey(f.declaration), d);
      const { backendPoolId, ipConfiguration } = f.declaration;
      this.deps.events?.emit({ kind: "drift", backendPoolId, ipConfiguration, drift: d });
      this.deps.log.warn("drift", {
        targetId: this.target.id,
        backendPoolId: f.declaration.backendPoolId,
        ipConfiguration: f.declaration.ipConfiguration,
        state: f.declaration.state,
        ...d,
      });
    });
    this.findings.clear();
  }

  private async appliedNow(): Promise<Set<string>> {
    const now = await this.deps.declarations.listForTarget(this.target);
    return new Set(now.filter((d) => d.outcome.kind === "applied").map(driftKey));
  }
}

/** A VM's NICs as they were before the pass wrote them: one resource per NIC. */
export function vmDriftView(v: VmNicResult): ObservedResource[] {
  return v.before && !v.gone ? [{ kind: "nic", ids: v.before.nicIds, nics: v.before.view }] : [];
}
