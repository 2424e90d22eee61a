import type { ConvertOfficeResult } from './convert-office.js';
import { info, type Figure } from './figure.js';

const GROUP = 'Office, RTF and EPUB conversion (bench/convert-office.ts)';

/** Rows of docs/benchmarks.md for bench/convert-office.ts: units a second per type, DOC beside catdoc and antiword (no targets). */
export function convertOfficeFigures(r: ConvertOfficeResult | null): Figure[] {
  if (r === null) return [info(GROUP, 'office conversions', null, '', 'not measured: the benchmark process failed')];
  const rows: Figure[] = [];
  const byType = new Map<string, { units: number; ms: number; files: string[] }>();
  for (const t of r.types) {
    const sum = byType.get(t.type) ?? { units: 0, ms: 0, files: [] };
    sum.units += t.units;
    sum.ms += t.ms;
    sum.files.push(`${t.file} ${t.units} in ${t.ms} ms`);
    byType.set(t.type, sum);
  }
  for (const [type, s] of byType)
    rows.push(
      info(
        GROUP,
        `${type.toUpperCase()}: units (slides, sheets, chapters, parts) a second`,
        s.ms === 0 ? null : Math.round((s.units / s.ms) * 1000),
        'units/s',
        `median of 5 runs a file: ${s.files.join('; ')}`,
      ),
    );
  for (const d of r.doc) {
    for (const t of d.tools)
      rows.push(
        info(
          GROUP,
          `DOC ${d.file} (${d.kb} KB), convertDoc`,
          d.oursMs,
          'ms',
          `${t.theirWordsInOurs}% of ${t.name}'s words are in our Markdown`,
          {
            name: `${t.name}, whole process, same file`,
            value: t.ms,
          },
        ),
      );
    if (d.tools.length === 0)
      rows.push(
        info(
          GROUP,
          `DOC ${d.file} (${d.kb} KB), convertDoc`,
          d.oursMs,
          'ms',
          `catdoc and antiword not installed (scripts/ci-deps.sh bench)`,
        ),
      );
  }
  return rows;
}
