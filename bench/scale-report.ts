import type { Figure } from './figure.js';
import type { MachineFacts } from './machine.js';
import { renderReport } from './report.js';

const START = '<!-- scale tier: written by npm run bench -- --scale -->';
const END = '<!-- end of the scale tier -->';

/** The "Scale tier" section of docs/benchmarks.md, between markers that the normal tier keeps. */
export function renderScaleSection(
  figures: readonly Figure[],
  facts: { machine: MachineFacts; command: string; base: string; durationS: number },
): string {
  // The normal tier's renderer makes the table; its header is replaced by the tier's own.
  const tables = renderReport(figures, {
    machine: facts.machine,
    command: facts.command,
    files: 1_000_000,
    full: false,
    durationS: facts.durationS,
    notes: [],
  });
  const body = tables.slice(tables.indexOf('\n## Scale tier')).replace('\n## Scale tier', '');
  const failed = figures.filter((f) => f.target !== null && f.pass !== true);
  const m = facts.machine;
  return [
    START,
    '## Scale tier',
    '',
    `Written by \`${facts.command}\` (bench/scale.ts) on ${m.date}: ${m.cpus} × ${m.cpuModel}, ${m.memoryGb} GB, node ${m.node};`,
    `load ${m.loadBefore.join(', ')} at the start, ${m.loadAfter?.join(', ') ?? '?'} at the end; ${facts.durationS} s in all; trees cached in ${facts.base}.`,
    '',
    `**Scale result: ${failed.length === 0 ? 'every target met' : `${failed.length} target(s) missed or not measured`}.**`,
    body.trimEnd(),
    END,
  ].join('\n');
}

/** `doc` with its scale section replaced by `section` (appended when it has none). */
export function withScaleSection(doc: string, section: string): string {
  const kept = scaleSectionOf(doc);
  const rest = kept === null ? doc.trimEnd() : doc.replace(kept, '').trimEnd();
  return `${rest}\n\n${section}\n`;
}

/** The scale section of `doc` (markers included), or null: the normal tier carries it over. */
export function scaleSectionOf(doc: string): string | null {
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  return a === -1 || b < a ? null : doc.slice(a, b + END.length);
}
