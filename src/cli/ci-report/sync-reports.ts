import type { SyncRun } from '../../sync/executor/index.js';
import type { Session } from '../session.js';
import { syncCiReport } from './from-sync.js';
import { writeCiReports, type CiReportOptions } from './write.js';

/**
 * Writes a finished sync's CI reports when any was asked for (`--report-md`, `--junit`): the credits
 * the run spent, those still reserved by calls whose outcome is not known, and the dataset's balance
 * (a free GET; left unknown when it fails).
 */
export async function syncCiReports(session: Session, run: SyncRun, opts: CiReportOptions & { all?: boolean }): Promise<void> {
  if (opts.reportMd === undefined && opts.junit === undefined) return;
  const reserved = session.state.creditsUsed(run.runId).reserved.run;
  let left: number | null = null;
  try {
    left = (await (await session.getClient()).getDataset()).creditsRemaining;
  } catch {
    // The report says "unknown": the run is done, and its report matters more than the balance.
  }
  const report = syncCiReport(run, { all: opts.all === true, credits: { spent: run.totals.creditsSpent, reserved, left } });
  await writeCiReports(opts, report, session.ctx);
}
