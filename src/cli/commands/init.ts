import type { Command } from 'commander';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { schemaModeline } from '../../config/schema-file.js';
import { STARTER_CONFIG } from '../../config/starter.js';
import { KbsyncError } from '../../shared/errors.js';
import { configPathOf } from '../config-option.js';
import type { CliContext } from '../context.js';
import { writeLines } from '../output.js';

/** `kbsync init [--force]`: write a commented starter config, and its ./docs folder when missing. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('init')
    .description(
      'write a commented starter kbsync.yaml (to -c FILE) syncing ./docs into the embedded service; creates ./docs next to it if missing',
    )
    .option('--force', 'overwrite an existing config file')
    .action((options: { force?: boolean }, cmd: Command) => {
      const { given, absolute } = configPathOf(cmd, ctx, { search: false });
      if (existsSync(absolute)) {
        if (statSync(absolute).isDirectory()) throw new KbsyncError('usage', `${given} is a folder; pass -c FILE to name the config file`);
        if (options.force !== true) throw new KbsyncError('usage', `${given} already exists; use --force to overwrite it`);
      }
      const folder = dirname(absolute);
      mkdirSync(folder, { recursive: true });
      // Its first line names the JSON Schema, so editors complete and check the keys.
      writeFileSync(absolute, schemaModeline(folder) + STARTER_CONFIG);
      const lines = [`wrote ${given}`];
      const docs = join(folder, 'docs');
      if (!existsSync(docs)) {
        mkdirSync(docs, { recursive: true });
        lines.push(`created ${relative(ctx.cwd, docs) || '.'}/ (put the documents to sync there, or change sources[0].path)`);
      }
      lines.push(
        'next: kbsync config check, then kbsync plan',
        'tip: add .kbsync/ to .gitignore (the sync state and the embedded service data live there)',
      );
      writeLines(ctx, ...lines);
    });
}
