/** The PostgreSQL state: one dataset, one budget, many runners (docs/scale.md). */
export { isPostgresUrl, openPgState, redactUrl, type PgStateStore } from './store.js';
export type { RunnerRecord as PgRunnerRecord } from './runs.js';
