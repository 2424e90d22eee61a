import { constants } from 'node:fs';
import { access, appendFile, mkdir, stat, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { KbsyncError, errorText } from '../../shared/errors.js';
import { ciJunit } from './junit.js';
import { ciMarkdown } from './markdown.js';
import type { CiReport } from './model.js';

/** Where a command writes its CI reports (`--report-md FILE`, `--junit FILE`). */
export type CiReportOptions = { reportMd?: string; junit?: string };

/** Where relative paths start, and the environment ($GITHUB_STEP_SUMMARY). */
type Where = { cwd: string; env: Readonly<Record<string, string | undefined>> };

/**
 * Writes the report as Markdown to `opts.reportMd` and as JUnit XML to `opts.junit` (paths relative to
 * `cwd`, folders created). With --report-md, the Markdown is also appended to the file
 * `$GITHUB_STEP_SUMMARY` names when `env` has it (GitHub Actions shows it on the run's page); a FILE
 * that is that summary file is appended to once. A file that cannot be written fails (usage, exit 2)
 * with its path and the reason.
 */
export async function writeCiReports(opts: CiReportOptions, report: CiReport, where: Where): Promise<void> {
  if (opts.reportMd !== undefined) {
    const markdown = ciMarkdown(report);
    const mdPath = resolve(where.cwd, opts.reportMd);
    const summaryPath = stepSummary(where);
    // --report-md "$GITHUB_STEP_SUMMARY": appended like the summary (earlier steps wrote there too), and only once.
    await write(mdPath, markdown, '--report-md', mdPath === summaryPath);
    if (summaryPath !== null && summaryPath !== mdPath) await write(summaryPath, markdown, 'GITHUB_STEP_SUMMARY', true);
  }
  if (opts.junit !== undefined) await write(resolve(where.cwd, opts.junit), ciJunit(report), '--junit', false);
}

/**
 * Checks, before a command does (or pays for) anything, that each report it was asked for can be
 * written: its folder exists or can be made, and it is writable. Throws a usage error (exit 2) naming
 * the option and the path otherwise.
 */
export async function checkCiReportTargets(opts: CiReportOptions, where: Where): Promise<void> {
  const targets: [string, string][] = [];
  if (opts.reportMd !== undefined) {
    targets.push(['--report-md', resolve(where.cwd, opts.reportMd)]);
    const summary = stepSummary(where);
    if (summary !== null) targets.push(['GITHUB_STEP_SUMMARY', summary]);
  }
  if (opts.junit !== undefined) targets.push(['--junit', resolve(where.cwd, opts.junit)]);
  for (const [what, path] of targets) {
    try {
      const existing = await stat(path).catch(() => null);
      if (existing?.isDirectory() === true) throw new Error('it is a folder');
      if (existing !== null) await access(path, constants.W_OK);
      else {
        await mkdir(dirname(path), { recursive: true });
        await access(dirname(path), constants.W_OK);
      }
    } catch (err) {
      throw cannotWrite(what, path, err);
    }
  }
}

function stepSummary(where: Where): string | null {
  const summary = where.env.GITHUB_STEP_SUMMARY;
  return summary === undefined || summary === '' ? null : resolve(where.cwd, summary);
}

async function write(path: string, text: string, what: string, append: boolean): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true });
    if (append) await appendFile(path, `\n${text}`);
    else await writeFile(path, text);
  } catch (err) {
    throw cannotWrite(what, path, err);
  }
}

function cannotWrite(what: string, path: string, err: unknown): KbsyncError {
  return new KbsyncError('usage', `${what}: cannot write ${path}: ${errorText(err)}; name a file in a folder you can write to`);
}
