import type { Logger } from '../shared/logger.js';
import type { RunItem } from '../sync/types.js';

/**
 * The daemon's `file` log lines: one per file action of a cycle, with its reason. Unchanged files get
 * none, and a file skipped (or found deleted) again for the same reason as in the last cycle gets none either: every cycle
 * plans the whole tree, and at 100k files a tree's images and dotfiles were ~18k identical lines a
 * cycle (~70 ms of logging each time). A skip is logged again once its reason changes. `scoped`: the
 * items are of a cycle that looked at some folders only: the skips it saw are added to those of the
 * cycles before, which it does not replace.
 */
export function createFileLines(logger: Logger): (items: readonly RunItem[], scoped?: boolean) => void {
  // A file line holds six fields named below, none a secret, each a string or a number: it skips the
  // logger's redaction, whose wildcard paths cost ~4 µs a line (a first cycle at 100k files logs ~18k
  // skipped files: ~65 ms of its way to ready, against ~15 ms for the lines themselves).
  const fileLog = logger.child({}, { redact: { paths: [], censor: '[redacted]' } });
  // `source\0path` → `action\0reason` of the files the last cycle skipped.
  let skippedBefore = new Map<string, string>();
  return (items, scoped = false) => {
    const skipped = scoped ? skippedBefore : new Map<string, string>();
    for (const item of items) {
      if (item.action === 'skip:unchanged') continue;
      const key = `${item.source}\0${item.path}`;
      // A deleted file's row stays tracked (its remote copy is kept): every full cycle reports it again.
      if (item.action.startsWith('skip:') || item.action === 'deleted') {
        const why = `${item.action}\0${item.reason}`;
        const before = skippedBefore.get(key);
        skipped.set(key, why);
        if (before === why) continue;
      } else skipped.delete(key);
      const { source, path, action, reason, creditsCharged: credits, outcome } = item;
      fileLog.info({ source, path, action, reason, credits, outcome }, 'file');
    }
    skippedBefore = skipped;
  };
}
