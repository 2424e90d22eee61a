import { openState } from '../../src/sync/state/index.js';

/** The credits a workspace's state records as spent and as still reserved in today's UTC day (read from its state file). */
export function creditsOfDay(ws: { statePath: string }): { spent: number; reserved: number } {
  const state = openState(ws.statePath);
  try {
    const used = state.creditsUsed(null);
    return { spent: used.spent.day, reserved: used.reserved.day };
  } finally {
    state.close();
  }
}
