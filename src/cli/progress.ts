import type { Writer } from './context.js';
import { printable } from '../shared/printable.js';

const BAR_WIDTH = 24;
/** Redraws at most this often (a sync of 100k files would otherwise write 100k lines to the terminal). */
const REDRAW_MS = 100;

/** What a long run is doing: hashing files, making paid calls (uploads, intelligence writes), or waiting for the service to process. */
export type ProgressPhase = 'hashing' | 'uploading' | 'writing' | 'waiting';

/** A progress bar on stderr: `update` redraws it, `finish` erases it. A no-op when not on a terminal. */
export type Progress = {
  /** False when nothing is drawn (not a terminal, or disabled): callers need not report progress at all. */
  active: boolean;
  update(phase: ProgressPhase, done: number, total: number, detail?: string): void;
  finish(): void;
};

/**
 * A progress bar redrawn in place on `out` when it is a terminal (`isTTY`), at most every 100 ms and at
 * each change of phase or end of one, cut to the terminal's width; erased by `finish()` so the report
 * that follows starts on a clean line. Off a terminal (a CI log, a pipe), and with `enabled: false`
 * (`--json`), it writes nothing. Hand-written rather than a library: the bar writes to the CLI's
 * Writer seam (a buffer in tests), which libraries such as cli-progress do not take (they drive a
 * tty.WriteStream's cursor and run their own redraw timer).
 */
export function createProgress(out: Writer, o: { enabled?: boolean; nowMs?: () => number } = {}): Progress {
  if (out.isTTY !== true || o.enabled === false) return { active: false, update: () => {}, finish: () => {} };
  const nowMs = o.nowMs ?? Date.now;
  let drawn = false;
  let lastAt = -Infinity;
  let lastPhase: ProgressPhase | null = null;
  return {
    active: true,
    update(phase, done, total, detail = '') {
      const at = nowMs();
      if (phase === lastPhase && done < total && at - lastAt < REDRAW_MS) return;
      lastAt = at;
      lastPhase = phase;
      const ratio = total > 0 ? Math.min(1, done / total) : 0;
      const filled = Math.round(ratio * BAR_WIDTH);
      const line = `${phase.padEnd(9)} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${done}/${total} ${printable(detail)}`;
      // A terminal that does not say its width (0, as under `script`) is taken as 80 columns.
      const width = Math.max(20, (out.columns !== undefined && out.columns > 0 ? out.columns : 80) - 1);
      out.write(`\r${fit(line, width)}\x1b[K`);
      drawn = true;
    },
    finish() {
      if (drawn) out.write('\r\x1b[K');
      drawn = false;
      lastPhase = null;
    },
  };
}

/** The line cut to `width` characters, the end of a long path kept ("…/docs/a.md"). */
function fit(line: string, width: number): string {
  if (line.length <= width) return line;
  const head = line.indexOf('] ');
  const keep = head + 2 + line.slice(head + 2).indexOf(' ') + 1;
  if (keep >= width - 1) return line.slice(0, width);
  return `${line.slice(0, keep)}…${line.slice(line.length - (width - keep - 1))}`;
}
