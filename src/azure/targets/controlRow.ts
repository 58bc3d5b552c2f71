import {
  decodeControl,
  emptyControl,
  encodeControl,
  type ControlBounds,
  type ControlState,
  type DeclarationCounts,
} from "../../core/control";
import { CONTROL_ROW } from "./rowKeys";

/**
 * The control row as an entity: its state is one JSON column, so every change to it is one conditional write of the
 * whole (a lease, a window, a count: never half of one).
 */

export const CONTROL_COLUMN = "state";

export function controlEntity(partitionKey: string, state: ControlState): Record<string, unknown> {
  return { partitionKey, rowKey: CONTROL_ROW, [CONTROL_COLUMN]: encodeControl(state) };
}

/** What a stored control row means now: its state, or a rebuilt one (counts from the rows) with the reason. */
export function controlOf(
  row: Record<string, unknown> | undefined,
  now: number,
  bounds: ControlBounds,
  counts: () => DeclarationCounts,
): { state: ControlState; problems: string[] } {
  if (!row) return { state: { ...emptyControl(), counts: counts() }, problems: [] };
  const decoded = decodeControl(row[CONTROL_COLUMN], now, bounds);
  if (decoded.ok) return { state: decoded.state, problems: decoded.problems };
  return {
    state: { ...emptyControl(), counts: counts() },
    problems: [`control row unreadable (${decoded.reason}): rebuilt from the declarations`],
  };
}
