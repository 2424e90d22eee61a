/**
 * Conversions inside the pipeline, each beside its reference in the same run:
 * - a cold plan of a folder of 200 PDFs (every one converted): its wall time and the CPU time of
 *   the process and its threads, whose ratio says how many cores the conversions kept busy;
 * - the plan of an unchanged folder of 10,000 converted documents (RTF: the state seeded as synced)
 *   beside the plan of 10,000 unchanged Markdown files: no conversion may run, so both cost the same.
 * `npx tsc -p tsconfig.bench.json && node .bench-build/bench/convert-sync.js` runs it alone.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConvertPool } from '../src/convert/pool.js';
import { ConversionCache } from '../src/sync/sources/converted.js';
import { manyPagePdf } from './pdf-files.js';
import { timePlan, writeConfig } from './cli-runner.js';
import { median } from './measure.js';
import { kbsyncBin } from './paths.js';
import { seedSyncedState } from './seed-state.js';

export type ConvertSyncResult = {
  cores: number;
  cold: { documents: number; pages: number; wallMs: number; cpuMs: number } | null;
  unchanged: {
    files: number;
    runs: number;
    convertedMs: number;
    markdownMs: number;
    convertedRunsMs: number[];
    markdownRunsMs: number[];
  } | null;
  problems: string[];
};

/** Wall and CPU time (user + system, of the process and all its threads) of one command, through bash's `times`. */
function timeWithCpu(args: readonly string[]): { wallMs: number; cpuMs: number; status: number | null; stderr: string } {
  const quoted = args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const t0 = performance.now();
  const res = spawnSync('bash', ['-c', `${quoted} > /dev/null; status=$?; times; exit $status`], { encoding: 'utf8' });
  const wallMs = performance.now() - t0;
  // `times` prints the shell's own times, then its children's: "0m1.505s 0m0.256s".
  const children = res.stdout.trim().split('\n').at(-1) ?? '';
  const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].reduce((sum, m) => sum + Number(m[1]) * 60 + Number(m[2]), 0);
  return { wallMs, cpuMs: seconds * 1000, status: res.status, stderr: res.stderr };
}

/** Distinct bytes of the same PDF: a comment after its end (readers ignore it) makes each a document of its own. */
function pdfCopies(dir: string, count: number, pages: number): void {
  const pdf = manyPagePdf(pages);
  for (let i = 0; i < count; i++)
    writeFileSync(join(dir, `report-${String(i).padStart(4, '0')}.pdf`), Buffer.concat([pdf, Buffer.from(`% copy ${i}\n`)]));
}

export async function runConvertSyncBench(
  o: { documents?: number; pages?: number; unchanged?: number; runs?: number } = {},
): Promise<ConvertSyncResult> {
  const documents = o.documents ?? 200;
  const pages = o.pages ?? 10;
  const count = o.unchanged ?? 10_000;
  const runs = o.runs ?? 7;
  const root = mkdtempSync(join(tmpdir(), 'kbsync-bench-convert-'));
  const problems: string[] = [];
  const result: ConvertSyncResult = { cores: availableParallelism(), cold: null, unchanged: null, problems };
  try {
    // A cold plan of 200 PDFs: every one converted, in the pool's threads.
    const pdfs = join(root, 'pdfs');
    mkdirSync(pdfs);
    pdfCopies(pdfs, documents, pages);
    // An empty state lists the dataset first: the embedded service, empty, answers it.
    const coldConfig = writeConfig(join(root, 'cold.yaml'), {
      treeDir: pdfs,
      statePath: join(root, 'cold', 'state.db'),
      target: { kind: 'embedded', dataDir: join(root, 'cold', 'service') },
    });
    appendFileSync(coldConfig, 'convert: [pdf]\n');
    const cold = timeWithCpu([process.execPath, kbsyncBin(), 'plan', '-c', coldConfig, '--json']);
    if (cold.status === 0)
      result.cold = { documents, pages: documents * pages, wallMs: Math.round(cold.wallMs), cpuMs: Math.round(cold.cpuMs) };
    else problems.push(`cold plan exited ${cold.status}: ${cold.stderr.slice(0, 300)}`);

    // 10,000 unchanged converted documents beside 10,000 unchanged Markdown files, states seeded as synced.
    const rtf = join(root, 'rtf');
    const md = join(root, 'md');
    for (const dir of [rtf, md]) mkdirSync(dir);
    for (let i = 0; i < count; i++) {
      const folder = `d${String(Math.floor(i / 500)).padStart(2, '0')}`;
      if (i % 500 === 0) for (const dir of [rtf, md]) mkdirSync(join(dir, folder));
      const text = `Note ${i}: the survey of station ${i % 97} found the channel ${i % 13} metres deep.`;
      writeFileSync(join(rtf, folder, `note-${i}.rtf`), `{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Times;}}\\f0\\fs24 ${text}\\par}`);
      writeFileSync(join(md, folder, `note-${i}.md`), `${text}\n`);
    }
    const configs: Record<'rtf' | 'md', string> = { rtf: '', md: '' };
    for (const kind of ['rtf', 'md'] as const) {
      const stateDir = join(root, `state-${kind}`);
      const statePath = join(stateDir, 'state.db');
      mkdirSync(stateDir);
      const source = {
        name: 'bench',
        path: kind === 'rtf' ? rtf : md,
        include: ['**/*'],
        exclude: [],
        followSymlinks: false,
        convert: kind === 'rtf' ? (['rtf'] as const) : [],
      };
      const pool = createConvertPool({ timeLimitMs: 120_000, memoryLimitMb: 512 });
      try {
        await seedSyncedState(statePath, { ...source, convert: [...source.convert] }, stateDir, {
          cache: new ConversionCache(stateDir),
          pool: () => pool,
        });
      } finally {
        await pool.close();
      }
      configs[kind] = writeConfig(join(root, `${kind}.yaml`), { treeDir: source.path, statePath, target: { kind: 'remote', port: 9 } });
      if (kind === 'rtf') appendFileSync(configs[kind], 'convert: [rtf]\n');
    }
    const times: Record<'rtf' | 'md', number[]> = { rtf: [], md: [] };
    for (let r = 0; r < runs; r++) {
      for (const kind of ['rtf', 'md'] as const) {
        const run = timePlan(configs[kind]);
        if (run.problem !== null) problems.push(run.problem);
        else times[kind].push(run.ms);
      }
    }
    if (times.rtf.length > 0 && times.md.length > 0)
      result.unchanged = {
        files: count,
        runs,
        convertedMs: Math.round(median(times.rtf) ?? 0),
        markdownMs: Math.round(median(times.md) ?? 0),
        convertedRunsMs: times.rtf.map(Math.round),
        markdownRunsMs: times.md.map(Math.round),
      };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await runConvertSyncBench(), null, 2));
