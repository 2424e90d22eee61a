import { loadConfigDetailed } from '../../src/config/load.js';
import { silentLogger } from '../../src/shared/logger.js';
import { preparePlan, type PreparedPlan } from '../../src/sync/executor/prepare.js';
import { openState } from '../../src/sync/state/index.js';

/**
 * preparePlan of a plan (no run) on the state of the config at `configPath`, which must need no remote
 * call; the state padded to `padBytes` first (a state that large starts the walk-ahead helper).
 */
export async function preparedPlanOf(configPath: string, o: { padBytes?: number; countUnchanged?: boolean } = {}): Promise<PreparedPlan> {
  const { config } = loadConfigDetailed(configPath, {});
  const state = openState(config.state);
  try {
    if ((o.padBytes ?? 0) > 0) state.setMeta('test.padding', 'x'.repeat(o.padBytes ?? 0));
    return await preparePlan(
      { config, state, logger: silentLogger(), getClient: () => Promise.reject(new Error('a warm plan calls no one')) },
      null,
      { countUnchanged: o.countUnchanged === true },
    );
  } finally {
    state.close();
  }
}
