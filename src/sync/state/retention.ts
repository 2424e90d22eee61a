// How long each store keeps what it prunes: the same for SQLite and PostgreSQL.

/** How many of the newest finished runs are always kept; older ones go unless something still refers to them. */
export const RUNS_KEPT = 500;

/** Accepted deliveries are kept this many days (by the time they were received)... */
export const WEBHOOK_EVENTS_KEEP_DAYS = 30;
/** ...and at most this many of them, the newest. */
export const WEBHOOK_EVENTS_KEEP_ROWS = 10_000;
/** The daemon prunes as it records, at most once in this many milliseconds (and every open of the state prunes). */
export const WEBHOOK_PRUNE_EVERY_MS = 60 * 60_000;
