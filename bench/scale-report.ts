import type { Figure } from './figure.js';
import type { MachineFacts } from './machine.js';
import { renderReport } from './report.js';

const START = '<!-- scale tier: written by npm run bench -- --scale -->';
const END = '<!-- end of the scale tier -->';

/** How to run the tier and what its figures mean: the section's fixed opening. */
const ABOUT = [
  'Run with `npm run bench -- --scale` (every group but the first sync), `--scale=all` (with it) or',
  '`--scale=memory,daemon,unchanged,cold,pg,service,firstsync` (some groups: each replaces its own figures, kept with',
  "their run in docs/benchmarks-scale.json, and the other groups' stay); the normal `npm run bench` and",
  '`npm run check` never run it and keep this section as it is. Trees (1,000 folders × 1,000 Markdown files of 1–7 KB; 100 × 1,000',
  'of 1–7 KB; 20 × 1,000 of 1–16 KB), their `cp -a` copies and states seeded as synced are made once and',
  'cached under `KBSYNC_SCALE_DIR` (default `os.tmpdir()/kbsync-scale`); `KBSYNC_SCALE_TREE_M1`,',
  '`KBSYNC_SCALE_TREE_K100` and `KBSYNC_SCALE_TREE_K20` reuse existing trees, read only. Each group runs in',
  'a fresh process; a group that crashes is one FAIL line and the others still run. Every kbsync command',
  'runs under `/usr/bin/time -v` on the embedded target with `budget.maxCreditsPerRun: 0` (nothing is paid;',
  'exit 3, the budget stop, counts as a run). The figures: the cold plan (empty state) against',
  '`find | xargs -0 -P2 sha256sum` over the same files (wall time; CPU in the notes); the unchanged plan',
  '(state seeded as synced) against `rsync -an` to an identical copy, alone and beside two busy processes',
  '(a machine twice as slow); peak RSS of `plan`, `plan --json`, `sync` and `status`; the state file',
  '(+ WAL) per tracked file; `kbsync watch`: spawn to ready (its status file), peak RSS, inotify watches',
  "(from /proc/PID/fdinfo) against the tree's folders, and a plan answered by the daemon against an empty",
  "folder's plan. Lines marked not measured are figures the harness does not measure yet.",
];

/** One group's last run: what it measured, and when, where and how (docs/benchmarks-scale.json keeps one per group). */
export type ScaleRun = { key: string; label: string; command: string; machine: MachineFacts; durationS: number; figures: Figure[] };

/**
 * The "Scale tier" section of docs/benchmarks.md, between markers that the normal tier keeps: the
 * last run of each group (in `runs`' order), each group's run named with its date and load.
 */
export function renderScaleSection(runs: readonly ScaleRun[], base: string): string {
  const figures = runs.flatMap((r) => r.figures);
  const latest = runs.reduce<ScaleRun | null>((a, r) => (a === null || r.machine.date > a.machine.date ? r : a), null);
  // The normal tier's renderer makes the table; its header is replaced by the tier's own.
  const tables =
    latest === null
      ? ''
      : renderReport(figures, {
          machine: latest.machine,
          command: latest.command,
          files: 1_000_000,
          full: false,
          durationS: latest.durationS,
          notes: [],
        });
  const body = latest === null ? '' : tables.slice(tables.indexOf('\n## Scale tier')).replace('\n## Scale tier', '');
  const failed = figures.filter((f) => f.target !== null && f.pass !== true);
  const when = runs.map((r) => {
    const m = r.machine;
    return `- ${r.label}: \`${r.command}\` on ${m.date}, ${m.cpus} × ${m.cpuModel}, ${m.memoryGb} GB, node ${m.node}; load ${m.loadBefore.join(', ')} at the start, ${m.loadAfter?.join(', ') ?? '?'} at the end; ${r.durationS} s.`;
  });
  return [
    START,
    '## Scale tier',
    '',
    `Each group's last run (bench/scale.ts; trees cached in ${base}):`,
    '',
    ...when,
    '',
    ...ABOUT,
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
