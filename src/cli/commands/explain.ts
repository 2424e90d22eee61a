import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import type { ResolvedConfig } from '../../config/schema.js';
import { KbsyncError } from '../../shared/errors.js';
import type { CliContext } from '../context.js';
import { writeJson, writeLines } from '../output.js';
import { withReaderSession } from '../session.js';
import { printable, quoted } from '../../shared/printable.js';

/** `kbsync explain PATH`: why this file (or intelligence entry) would be uploaded, written, skipped or deferred, with the facts behind it. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('explain')
    .description(
      'why a file or an intelligence entry is uploaded, written, skipped or deferred (PATH as in the plan: source-relative, or source/path; an entry: source/file#key)',
    )
    .argument('<path>', 'the file, entry or entry file')
    .option('--json', 'print the plan item(s) as JSON')
    .action(async (path: string, options: { json?: boolean }, cmd: Command) => {
      await withReaderSession(cmd, ctx, async (session) => {
        const { preparePlan } = await import('../../sync/executor/index.js');
        const { explainEntry, explainItem, findEnclosingSkips, findEntryItems, findItems } = await import('../../sync/report/index.js');
        const { trackedKey } = await import('../../sync/planner/index.js');
        const { plan, tracked } = await preparePlan(session, null);
        const lookup = (q: string) => {
          const exact = findItems(plan, q);
          // A file inside an excluded or ignored folder has no item of its own: the folder's explains it.
          const items = exact.length > 0 ? exact : findEnclosingSkips(plan, q);
          // An intelligence entry (`kb/faq.yaml#2`), or an entry file: its entries.
          const entries = exact.length > 0 ? [] : findEntryItems(plan, q);
          return { exact, items, entries };
        };
        let found = lookup(path);
        // Not a plan path: the path as the shell gave it (from the working folder, or absolute) inside a folder source.
        if (found.items.length === 0 && found.entries.length === 0) {
          const asSource = sourcePathOf(session.config.sources, ctx.cwd, path);
          if (asSource !== null) found = lookup(asSource);
        }
        const { exact, items, entries } = found;
        if (entries.length > 0) {
          const state = session.state;
          const byContent = state.trackedEntries();
          // Queued writes: the entry's own (a single write, or a batch it opens) and every open batch.
          const open = [...state.pendingOps(), ...state.inFlightOps(), ...state.unknownOps()];
          const facts = entries.map((item) => {
            const ops = new Map([...state.opsForPath(item.source, item.path), ...open].map((op) => [op.id, op]));
            return {
              tracked: item.sha256 === null ? undefined : byContent.get(item.sha256),
              ops: [...ops.values()].sort((a, b) => a.id - b.id),
            };
          });
          if (options.json === true) writeJson(ctx, { items: [], entries: entries.map((item, i) => ({ ...item, ...facts[i] })) });
          else writeLines(ctx, entries.map((item, i) => explainEntry(item, facts[i] as (typeof facts)[number])).join('\n\n'));
          return;
        }
        if (items.length === 0) {
          throw new KbsyncError(
            'usage',
            `${quoted(path)} is not in any source (neither found nor tracked); paths are as the plan prints them (source-relative, or source/path), or a file's path from the working folder`,
          );
        }
        // The state's row: it holds what the index leaves out (the remote copy's chunk count).
        const rowOf = (item: { source: string; path: string }) =>
          session.state.getTracked(item.source, item.path) ?? tracked.get(trackedKey(item.source, item.path));
        if (options.json === true) {
          writeJson(ctx, { items: items.map((item) => ({ ...item, remoteChunks: rowOf(item)?.remoteChunks ?? null })) });
          return;
        }
        const explained = items.map((item) => explainItem(item, rowOf(item), plan)).join('\n\n');
        if (exact.length > 0) writeLines(ctx, explained);
        else
          writeLines(ctx, `${printable(path)} is inside a folder that is skipped as a whole (its files are not looked at):`, '', explained);
      });
    });
}

/** `source/path` for a file-system path (relative to `cwd`, or absolute) inside a folder source's root; null when in none. */
export function sourcePathOf(sources: ResolvedConfig['sources'], cwd: string, typed: string): string | null {
  const abs = resolve(cwd, typed);
  for (const s of sources) {
    if (s.path === undefined) continue;
    const rel = relative(s.path, abs);
    if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) continue;
    return `${s.name}/${rel.split(sep).join('/')}`;
  }
  return null;
}
