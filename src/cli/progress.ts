import type { Writer } from './context.js';
import { printable } from '../shared/printable.js';

const BAR_WIDTH = 24;
/** Redraws at most this often (a sync of 100k files would otherwise write 100k lines to the terminal). */
const REDRAW_MS = 100;
/** No ETA before the phase has run this long: the first calls' rate says little. */
const ETA_AFTER_MS = 1000;

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
  // Where the phase started (time and count), for the ETA: the rate since then, not since the run began.
  let phaseStart = { at: 0, done: 0 };
  return {
    active: true,
    update(phase, done, total, detail = '') {
      const at = nowMs();
      if (phase === lastPhase && done < total && at - lastAt < REDRAW_MS) return;
      if (phase !== lastPhase) phaseStart = { at, done };
      lastAt = at;
      lastPhase = phase;
      const eta = etaText(at - phaseStart.at, done - phaseStart.done, total - done);
      const ratio = total > 0 ? Math.min(1, done / total) : 0;
      const filled = Math.round(ratio * BAR_WIDTH);
      const line = `${phase.padEnd(9)} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${done}/${total} ${eta}${printable(detail)}`;
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

/** "ETA 1m05s " from the rate so far in the phase; empty until a second has passed and something is done, or when nothing is left. */
function etaText(elapsedMs: number, doneInPhase: number, left: number): string {
  if (elapsedMs < ETA_AFTER_MS || doneInPhase <= 0 || left <= 0) return '';
  const s = Math.ceil(((elapsedMs / doneInPhase) * left) / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return `ETA ${h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${sec}s` : `${s % 60}s`} `;
}

/** The line cut to `width` characters, the end of a long path kept ("…/docs/a.md"). */
function fit(line: string, width: number): string {
  if (line.length <= width) return line;
  const head = line.indexOf('] ');
  const keep = head + 2 + line.slice(head + 2).indexOf(' ') + 1;
  if (keep >= width - 1) return line.slice(0, width);
  return `${line.slice(0, keep)}…${line.slice(line.length - (width - keep - 1))}`;
}
