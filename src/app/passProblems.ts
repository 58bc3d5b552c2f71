import type { ProblemLog, ReconcileProblem } from "../core/ports";
import type { TargetRef } from "../core/resourceIds";
import type { ProblemLogTable } from "../azure/problemLogTable";
import type { TargetStore } from "../azure/targets/targetStore";

/**
 * Passes that met a 412, a throttle or a failure, newest first, for the status view: each target's last problem (in its
 * control row, written with the pass's commit) merged with the shared problem log (passes that ended badly, with the
 * instances ARM refused).
 */
export function passProblems(
  log: ProblemLogTable,
  store: Pick<TargetStore, "listControls">,
): ProblemLog & Pick<ProblemLogTable, "trim"> {
  return {
    record: (ref: TargetRef, p: ReconcileProblem) => log.record(ref, p),
    trim: () => log.trim(),
    list: async (max = 200) => {
      const [logged, controls] = await Promise.all([log.list(max), store.listControls()]);
      const last: ReconcileProblem[] = [...controls.values()].flatMap((c) =>
        c.lastProblem
          ? [
              {
                scaleSetId: c.lastProblem.targetId,
                at: new Date(c.lastProblem.at).toISOString(),
                result: c.lastProblem.result,
                preconditionFailures: c.lastProblem.preconditionFailures,
                throttles: c.lastProblem.throttles,
                reason: c.lastProblem.reason,
              },
            ]
          : [],
      );
      // The log's row stands for a pass both hold.
      const seen = new Set(logged.map((p) => `${p.scaleSetId.toLowerCase()}|${p.at}`));
      const rest = last.filter((p) => !seen.has(`${p.scaleSetId.toLowerCase()}|${p.at}`));
      return [...logged, ...rest].sort((a, b) => b.at.localeCompare(a.at)).slice(0, max);
    },
  };
}
