import type { PlanItem } from '../sync/types.js';
import type { Writer } from './context.js';

const BAR_WIDTH = 24;

/**
 * Progress of a sync's paid calls on stderr: a bar redrawn in place on a terminal, one plain line per
 * finished call otherwise (CI logs). `finish()` ends the bar's line.
 */
export function createProgress(out: Writer): { update(done: number, total: number, item: PlanItem): void; finish(): void } {
  let drawn = false;
  return {
    update(done, total, item) {
      const name = item.source.length > 0 ? item.remoteName : item.path;
      if (out.isTTY === true) {
        const filled = Math.round((done / total) * BAR_WIDTH);
        out.write(`\r[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${done}/${total} ${truncate(name, 50)}\x1b[K`);
        drawn = true;
      } else {
        out.write(`${done}/${total} ${item.action} ${name}\n`);
      }
    },
    finish() {
      if (drawn) out.write('\n');
      drawn = false;
    },
  };
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `…${text.slice(text.length - max + 1)}`;
}
