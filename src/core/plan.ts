import { allPoolReferences, applyIntents, type NicConfiguration, type PoolIntent } from "./networkProfile";

/**
 * What a reconcile would write, pure: the same edit the reconcile makes (applyIntents), seen as writes per resource
 * and, per ip configuration, the pools it would gain and lose. Nothing here reads or writes anything.
 */

/** `pool`: an IP-based pool's own address list (issue 43), written with If-Match on its load balancer's ETag. */
export type PlannedKind = "model" | "instance" | "nic" | "pool";

export interface IpConfigChange {
  nicConfiguration: string;
  ipConfiguration: string;
  gain: string[];
  lose: string[];
}

export interface BasedOn {
  /** `cache`: a fresh cache row, as the reconcile would use it; `arm`: read from ARM now, as the reconcile would. */
  source: "cache" | "arm";
  /** How old the state was when planned. */
  ageMs: number;
}

export interface PlannedWrite {
  kind: PlannedKind;
  id: string;
  /** The ETag the write would be conditioned on (If-Match). */
  ifMatch: string;
  ipConfigurations: IpConfigChange[];
  /** A pool write: the addresses it would add and remove (`<ip> (<name>)`). */
  addresses?: { gain: string[]; lose: string[] };
  basedOn: BasedOn;
}

const poolIds = (nic: NicConfiguration | undefined, ipc: string) =>
  new Set(
    allPoolReferences(nic?.ipConfigurations?.find((c) => c.name === ipc) ?? { name: ipc }).map((p) =>
      String(p.id ?? "").toLowerCase(),
    ),
  );

/** Per ip configuration, the pools `after` has that `before` has not (gain) and the other way round (lose). */
export function poolChanges(before: readonly NicConfiguration[], after: readonly NicConfiguration[]): IpConfigChange[] {
  const out: IpConfigChange[] = [];
  after.forEach((nic, i) => {
    const was = before[i];
    for (const ipc of nic.ipConfigurations ?? []) {
      const a = poolIds(nic, ipc.name);
      const b = poolIds(was, ipc.name);
      const gain = [...a].filter((p) => !b.has(p));
      const lose = [...b].filter((p) => !a.has(p));
      if (gain.length > 0 || lose.length > 0)
        out.push({ nicConfiguration: nic.name, ipConfiguration: ipc.name, gain, lose });
    }
  });
  return out;
}

/**
 * The writes the intents need on one resource. `ids` as in drift: one per NIC for a VM's NICs (each NIC is written
 * on its own, with its own ETag), else one for the whole resource.
 */
export function planResource(
  kind: PlannedKind,
  ids: readonly string[],
  etags: readonly string[],
  nics: readonly NicConfiguration[],
  intents: readonly PoolIntent[],
  basedOn: BasedOn,
): PlannedWrite[] {
  const edit = applyIntents(nics as NicConfiguration[], intents as PoolIntent[]).nics;
  if (!edit) return [];
  if (ids.length <= 1) {
    return [{ kind, id: ids[0] ?? "", ifMatch: etags[0] ?? "", ipConfigurations: poolChanges(nics, edit), basedOn }];
  }
  return edit.flatMap((n, i) =>
    n === nics[i]
      ? []
      : [
          {
            kind,
            id: ids[i] ?? "",
            ifMatch: etags[i] ?? "",
            ipConfigurations: poolChanges([nics[i] as NicConfiguration], [n]),
            basedOn,
          },
        ],
  );
}
