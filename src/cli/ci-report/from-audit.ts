import type { AuditItem, AuditReport } from '../../sync/audit/compare.js';
import { AUDIT_KINDS } from '../../sync/audit/compare.js';
import type { CiCase, CiReport } from './model.js';

/**
 * A finished `kbsync audit` as a CI report. Each finding is a failed case, its suite the kind of drift
 * (`remote-untracked`, `stale-copy`, ...), its name the local path (or the remote file's name and id
 * when it maps to no path of ours; `entry ID (title)` for an intelligence entry of no record of ours). A clean audit is one passed case, `audit / no drift`, that says
 * what was compared: one case per tracked file would only repeat the state in a report about drift.
 * The counts are the files compared and the findings of each kind; the credits are none (listings
 * only) and the dataset's balance.
 */
export function auditCiReport(report: AuditReport, o: { creditsLeft: number | null; durationMs?: number }): CiReport {
  const s = report.summary;
  const e = s.entries;
  const compared = `${s.local} local, ${s.tracked} tracked, ${s.remote} remote${e === undefined ? '' : `; entries: ${e.local} records, ${e.tracked} tracked, ${e.remote} remote`}`;
  const cases: CiCase[] =
    report.items.length === 0
      ? [{ suite: 'audit', name: 'no drift', status: 'passed', message: `no drift: ${compared}` }]
      : report.items.map(findingCase);
  return {
    title: 'kbsync audit',
    counts: [
      { label: 'local', value: s.local },
      { label: 'tracked', value: s.tracked },
      { label: 'remote', value: s.remote },
      ...(s.entries === undefined
        ? []
        : [
            { label: 'entry records', value: s.entries.local },
            { label: 'entries tracked', value: s.entries.tracked },
            { label: 'entries listed', value: s.entries.remote },
          ]),
      { label: 'drift', value: s.drift },
      ...AUDIT_KINDS.filter((k) => s.byKind[k] > 0).map((k) => ({ label: k, value: s.byKind[k] })),
    ],
    credits: { spent: 0, reserved: 0, left: o.creditsLeft },
    notes: ['free: listings only, no credits spent'],
    cases,
    notListed: [],
    startedAt: report.auditedAt,
    ...(o.durationMs === undefined ? {} : { durationMs: o.durationMs }),
  };
}

function findingCase(i: AuditItem): CiCase {
  const entry = i.kind.startsWith('entry-');
  const remote =
    i.remoteId === null
      ? ''
      : entry
        ? `entry ${i.remoteId}${i.remoteName === null ? '' : ` (${i.remoteName})`}`
        : `remote ${i.remoteName ?? '?'} (id ${i.remoteId})`;
  const name = i.path ?? (remote === '' ? '(unnamed)' : remote);
  return { suite: i.kind, name, status: 'failed', message: i.detail };
}
