import type { Figure } from './figure.js';
import type { MachineFacts } from './machine.js';

/** What docs/benchmarks.md says about the run besides the figures. */
export type RunFacts = { machine: MachineFacts; command: string; files: number; full: boolean; durationS: number; notes: string[] };

/** docs/benchmarks.md: machine facts, then one table per benchmark, then notes. */
export function renderReport(figures: readonly Figure[], facts: RunFacts): string {
  const m = facts.machine;
  const failed = figures.filter((f) => f.pass === false);
  const lines = [
    '# Benchmarks',
    '',
    `Written by \`${facts.command}\` (bench/run.ts); do not edit by hand. Every figure is measured in compiled`,
    'JavaScript (never under a TypeScript loader), each benchmark in a fresh process, and stands beside a',
    'reference measured in the same run, alternated with it, so that a loaded machine shows as a slower',
    "reference rather than as a slower kbsync. Ratio = figure / reference, in the figure's unit.",
    '',
    "The references are other tools: `rsync` and coreutils' `sha256sum` (with `xargs`). A machine without",
    'them leaves those comparisons unmeasured (and their targets missed): install them first, on Debian or',
    'Ubuntu with `apt-get install -y rsync coreutils findutils` (coreutils and findutils are usually there).',
    'To compare two builds on one machine, interleaved, against rsync in the same run: `bench/compare.ts`.',
    '',
    `**Result: ${failed.length === 0 ? 'every target met' : `${failed.length} target(s) missed: ${failed.map((f) => f.name).join('; ')}`}.**`,
    '',
    '## Machine',
    '',
    `- date: ${m.date}`,
    `- CPU: ${m.cpus} × ${m.cpuModel}; memory ${m.memoryGb} GB; ${m.platform}`,
    `- node ${m.node}`,
    `- load average (1, 5, 15 min): ${m.loadBefore.join(', ')} at the start, ${m.loadAfter?.join(', ') ?? '?'} at the end`,
    `- tree: ${facts.files} files, ${facts.full ? 'realistic sizes, about 2.4 GB per 100k files (the default)' : '1–4 KB each (KBSYNC_BENCH_SMALL=1)'}`,
    `- whole run: ${facts.durationS} s`,
  ];
  const groups = [...new Set(figures.map((f) => f.group))];
  for (const group of groups) {
    lines.push('', `## ${group}`, '', '| Figure | Value | Reference (same run) | Ratio | Target | Result |', '|---|---|---|---|---|---|');
    for (const f of figures.filter((x) => x.group === group)) lines.push(row(f));
    const notes = figures.filter((x) => x.group === group && x.note !== undefined && x.note !== '');
    if (notes.length > 0) {
      lines.push('');
      for (const f of notes) lines.push(`- ${f.name}: ${escape(f.note ?? '')}`);
    }
  }
  if (facts.notes.length > 0) lines.push('', '## Notes', '', ...facts.notes.map((n) => `- ${n}`));
  return `${lines.join('\n')}\n`;
}

function row(f: Figure): string {
  const value = f.unit === 'check' ? '—' : f.value === null ? 'not measured' : `${f.value} ${f.unit}`;
  const reference =
    f.reference === null
      ? '—'
      : `${escape(f.reference.name)}: ${f.reference.value === null ? 'not measured' : `${f.reference.value} ${f.unit}`}`;
  const ratio = f.ratio === null ? '—' : f.ratio.toFixed(2);
  const result = f.pass === null ? (f.target === null ? '(diagnostic)' : 'NOT MEASURED') : f.pass ? 'PASS' : '**FAIL**';
  return `| ${escape(f.name)} | ${value} | ${reference} | ${ratio} | ${f.target === null ? '—' : escape(f.target)} | ${result} |`;
}

function escape(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** One line per figure for the terminal. */
export function figureLine(f: Figure): string {
  const value = f.unit === 'check' ? '' : f.value === null ? 'not measured' : `${f.value} ${f.unit}`;
  const ref = f.reference === null ? '' : ` (ref ${f.reference.value ?? '?'} ${f.unit}, ratio ${f.ratio ?? '?'})`;
  const result = f.pass === null ? '' : f.pass ? '  PASS' : '  FAIL';
  return `${f.name}: ${value}${ref}${f.target === null ? '' : ` [target: ${f.target}]`}${result}`;
}
