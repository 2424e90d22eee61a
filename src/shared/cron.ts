import { Cron } from 'croner';

/**
 * `watch.schedule`: a cron expression read as a window of minutes (in UTC). A minute the expression
 * matches is open: `* 22-23,0-5 * * *` opens every minute from 22:00 to 05:59, `0-29 * * * 1-5` the first
 * half of each hour on weekdays. Parsing and matching are croner's.
 */
export type CronWindow = {
  /** True when the minute holding `ms` matches the expression. */
  isOpen(ms: number): boolean;
  /** The start of the next open minute after `ms`, or null when there is none (a date that never comes). */
  nextOpenMs(ms: number): number | null;
};

const MINUTE_MS = 60_000;

function parse(expr: string): Cron {
  return new Cron(expr, { paused: true, timezone: 'UTC', mode: '5-part' });
}

/** Why `expr` is not a usable schedule, or null when it is. */
export function cronProblem(expr: string): string | null {
  const fields = expr.trim().split(/\s+/);
  if (!expr.trim().startsWith('@') && fields.length !== 5) {
    return `a cron expression of 5 fields (minute hour day-of-month month day-of-week, in UTC), got ${fields.length} in "${expr}"`;
  }
  try {
    const cron = parse(expr);
    if (cron.nextRun(new Date(0)) === null) return `"${expr}" never matches a minute`;
    return null;
  } catch (err) {
    return `not a cron expression: ${err instanceof Error ? err.message.replace(/^CronPattern: /, '') : String(err)}`;
  }
}

/** The window of `expr` (check it with cronProblem first: this throws on a bad one). */
export function cronWindow(expr: string): CronWindow {
  const cron = parse(expr);
  return {
    isOpen: (ms) => cron.match(new Date(Math.floor(ms / MINUTE_MS) * MINUTE_MS)),
    nextOpenMs: (ms) => cron.nextRun(new Date(ms))?.getTime() ?? null,
  };
}
