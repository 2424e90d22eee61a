/**
 * The office converters beside a reference tool on the same files, in one run:
 * `npx tsc -p tsconfig.bench.json && node .bench-build/bench/convert-office.js [DIR]`.
 * DOC: convertDoc against catdoc and antiword (Debian packages of those names): time per file and how
 * much of the reference's text our Markdown holds (the share of its words, counted with repeats).
 * Every office type: units (slides, sheets, chapters) and milliseconds per file. DIR defaults to test/fixtures/convert.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { convertDoc } from '../src/convert/doc.js';
import { convertEpub } from '../src/convert/epub.js';
import { convertOdp, convertOds, convertOdt } from '../src/convert/odf.js';
import { convertPptx } from '../src/convert/pptx.js';
import { convertRtf } from '../src/convert/rtf.js';
import { DEFAULT_CONVERT_LIMITS, type Converter, type ConvertType } from '../src/convert/types.js';
import { hasCommand, median, round1 } from './measure.js';
import { repoRoot } from './paths.js';

const RUNS = 5;

/** The converters of this script's types, by the file extension they take. */
const CONVERTERS: Record<Exclude<ConvertType, 'pdf'>, Converter> = {
  pptx: convertPptx,
  doc: convertDoc,
  odt: convertOdt,
  ods: convertOds,
  odp: convertOdp,
  rtf: convertRtf,
  epub: convertEpub,
};

const words = (text: string): Map<string, number> => {
  const counts = new Map<string, number>();
  const plain = text.replace(/\[\^\d+\]/g, ' ').replace(/[|#>*\\`]/g, ' ');
  for (const w of plain.normalize('NFC').split(/[^\p{L}\p{N}]+/u)) if (w !== '') counts.set(w, (counts.get(w) ?? 0) + 1);
  return counts;
};

/** The share of `reference`'s words (with their repeats) that `ours` holds too. */
function coverage(ours: string, reference: string): number {
  const a = words(ours);
  let total = 0;
  let found = 0;
  for (const [w, n] of words(reference)) {
    total += n;
    found += Math.min(n, a.get(w) ?? 0);
  }
  return total === 0 ? 1 : found / total;
}

async function timeConvert(convert: Converter, bytes: Uint8Array): Promise<{ ms: number; markdown: string; units: number }> {
  const times: number[] = [];
  let markdown = '';
  let units = 0;
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = await convert(bytes, { name: 'x', limits: DEFAULT_CONVERT_LIMITS });
    times.push(performance.now() - t0);
    if (!r.ok) throw new Error(r.reason);
    markdown = r.markdown;
    units = r.units;
  }
  return { ms: median(times) ?? 0, markdown, units };
}

function timeTool(command: string, args: string[]): { ms: number; text: string } {
  const times: number[] = [];
  let text = '';
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    times.push(performance.now() - t0);
    text = r.stdout;
  }
  return { ms: median(times) ?? 0, text };
}

export type OfficeTypeFigure = { type: string; file: string; units: number; ms: number };
export type DocToolFigure = { file: string; kb: number; oursMs: number; tools: { name: string; ms: number; theirWordsInOurs: number }[] };
export type ConvertOfficeResult = { types: OfficeTypeFigure[]; doc: DocToolFigure[]; toolsMissing: string[] };

const DOC_TOOLS = [
  { name: 'catdoc', args: (f: string) => ['-d', 'utf-8', '-w', f] },
  { name: 'antiword', args: (f: string) => ['-w', '0', '-m', 'UTF-8.txt', f] },
];

/** Each office type's units a second over the fixtures, and DOC beside catdoc and antiword (time, and how much of their text ours holds). */
export async function runConvertOfficeBench(o: { dir?: string } = {}): Promise<ConvertOfficeResult> {
  const dir = o.dir ?? join(repoRoot(), 'test/fixtures/convert');
  const files = readdirSync(dir).sort();
  const tools = DOC_TOOLS.filter((t) => hasCommand(t.name));
  const doc: DocToolFigure[] = [];
  for (const f of files.filter((n) => n.endsWith('.doc') && !n.startsWith('encrypted'))) {
    const path = join(dir, f);
    const bytes = new Uint8Array(readFileSync(path));
    const ours = await timeConvert(convertDoc, bytes);
    doc.push({
      file: f,
      kb: Math.round(bytes.length / 1024),
      oursMs: round1(ours.ms),
      tools: tools.map((t) => {
        const ref = timeTool(t.name, t.args(path));
        return { name: t.name, ms: round1(ref.ms), theirWordsInOurs: Math.round(coverage(ours.markdown, ref.text) * 1000) / 10 };
      }),
    });
  }
  const types: OfficeTypeFigure[] = [];
  for (const f of files.filter((n) => !n.startsWith('encrypted'))) {
    const type = f.split('.').pop() as keyof typeof CONVERTERS;
    const convert = CONVERTERS[type];
    if (convert === undefined) continue;
    const ours = await timeConvert(convert, new Uint8Array(readFileSync(join(dir, f))));
    types.push({ type, file: f, units: ours.units, ms: round1(ours.ms) });
  }
  return { types, doc, toolsMissing: DOC_TOOLS.filter((t) => !tools.includes(t)).map((t) => t.name) };
}

async function main(): Promise<void> {
  const r = await runConvertOfficeBench(process.argv[2] === undefined ? {} : { dir: process.argv[2] });
  for (const d of r.doc)
    console.log(
      `DOC ${d.file} (${d.kb} KB): ${d.oursMs} ms; ${d.tools.map((t) => `${t.name} ${t.ms} ms, ${t.theirWordsInOurs}% of its words in ours`).join('; ')}`,
    );
  for (const t of r.types) console.log(`${t.type.toUpperCase()} ${t.file}: ${t.units} units in ${t.ms} ms`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
