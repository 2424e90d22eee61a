import type { Command } from 'commander';
import { KbsyncError } from '../../shared/errors.js';
import type { CliContext } from '../context.js';
import { writeJson, writeLines } from '../output.js';
import { withSession } from '../session.js';

/** `kbsync explain PATH`: why this file would be uploaded, skipped or deferred, with the facts behind it. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('explain')
    .description('why a file is uploaded, skipped or deferred (PATH as in the plan: source-relative, or source/path)')
    .argument('<path>', 'the file')
    .option('--json', 'print the plan item(s) as JSON')
    .action(async (path: string, options: { json?: boolean }, cmd: Command) => {
      await withSession(cmd, ctx, async (session) => {
        const { preparePlan } = await import('../../sync/executor/index.js');
        const { explainItem, findEnclosingSkips, findItems } = await import('../../sync/report/index.js');
        const { trackedKey } = await import('../../sync/planner/index.js');
        const { plan, tracked } = await preparePlan(session, null);
        const exact = findItems(plan, path);
        // A file inside an excluded or ignored folder has no item of its own: the folder's explains it.
        const items = exact.length > 0 ? exact : findEnclosingSkips(plan, path);
        if (items.length === 0) {
          throw new KbsyncError('usage', `"${path}" is not in any source (neither found nor tracked); paths are relative to a source root`);
        }
        if (options.json === true) {
          writeJson(ctx, { items });
          return;
        }
        const explained = items.map((item) => explainItem(item, tracked.get(trackedKey(item.source, item.path)), plan)).join('\n\n');
        if (exact.length > 0) writeLines(ctx, explained);
        else writeLines(ctx, `${path} is inside a folder that is skipped as a whole (its files are not looked at):`, '', explained);
      });
    });
}
