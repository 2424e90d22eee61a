import type { AuditReport } from '../audit/compare.js';
import { formatCount, plural } from '../planner/format.js';
import { columns } from './columns.js';

/**
 * The audit for people: one aligned line per finding (kind, path or remote name, remote id, detail),
 * then a line of counts by kind (and of the intelligence entries compared, with intelligence sources).
 */
export function formatAudit(r: AuditReport): string {
  const lines = columns(
    r.items.map((i) => [i.kind, i.path ?? i.remoteName ?? '', i.remoteId === null ? '-' : `#${i.remoteId}`, i.detail]),
    ['left', 'left', 'right', 'left'],
  );
  const s = r.summary;
  if (r.items.length === 0) lines.push('no drift: the dataset holds exactly the tracked copies of the local files');
  const kinds = Object.entries(s.byKind)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${formatCount(n)} ${k}`);
  const e = s.entries;
  const entries =
    e === undefined
      ? ''
      : `; ${plural(e.local, 'entry record')}, ${formatCount(e.tracked)} tracked, ${plural(e.remote, 'remote entry', 'remote entries')}`;
  // Counted as `kbsync status` counts them: a file deleted locally is not tracked, but named apart.
  const deleted = s.trackedDeleted > 0 ? `, ${formatCount(s.trackedDeleted)} deleted locally (remote copies kept)` : '';
  lines.push(
    '',
    `${plural(s.local, 'local file')}, ${formatCount(s.tracked)} tracked${deleted}, ${plural(s.remote, 'remote file')}${entries}; ${plural(s.drift, 'finding')}${kinds.length > 0 ? ` (${kinds.join(', ')})` : ''}`,
  );
  return lines.join('\n');
}
