import type { Logger } from "../core/ports";
import type { OldLayoutSweeper } from "../azure/oldLayoutSweep";

/** One bounded batch of the upgrade's sweep per timer run; a failure is logged and the next run goes on. */
export async function sweepOldLayout(sweeper: OldLayoutSweeper, log: Logger): Promise<void> {
  try {
    const swept = await sweeper.sweep();
    if (swept.moved > 0 || swept.deleted > 0) log.info("timer.old-layout-swept", { ...swept });
  } catch (err) {
    log.warn("timer.old-layout-sweep-failed", { error: (err as Error).message });
  }
}
