import type { AuditReport } from '../../sync/audit/compare.js';
import type { CheckReport } from '../../sync/report/format-check.js';
import type { Session } from '../session.js';
import { auditCiReport } from './from-audit.js';
import { checkCiReport } from './from-check.js';
import { writeCiReports, type CiReportOptions } from './write.js';

/** The dataset's credit balance (a free GET), or null when it cannot be read: the report matters more than the balance. */
export async function creditsLeft(session: Session): Promise<number | null> {
  try {
    return (await (await session.getClient()).getDataset()).creditsRemaining;
  } catch {
    return null;
  }
}

/**
 * Writes a finished check's CI reports when any was asked for: the credits its queries spent (none
 * held: check waits for every answer) and the dataset's balance.
 */
export async function checkCiReports(session: Session, report: CheckReport, opts: CiReportOptions, startedMs: number): Promise<void> {
  if (opts.reportMd === undefined && opts.junit === undefined) return;
  const credits = { spent: report.summary.creditsSpent, reserved: 0, left: await creditsLeft(session) };
  await writeCiReports(opts, checkCiReport(report, { credits, durationMs: Date.now() - startedMs }), session.ctx);
}

/** Writes a finished audit's CI reports when any was asked for (nothing spent; the dataset's balance). */
export async function auditCiReports(session: Session, report: AuditReport, opts: CiReportOptions, startedMs: number): Promise<void> {
  if (opts.reportMd === undefined && opts.junit === undefined) return;
  const left = await creditsLeft(session);
  await writeCiReports(opts, auditCiReport(report, { creditsLeft: left, durationMs: Date.now() - startedMs }), session.ctx);
}
