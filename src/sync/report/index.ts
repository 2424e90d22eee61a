/** Reports for people and scripts: plans and runs as aligned lines, the `--json` document, `kbsync explain`. */
export { formatPlan, formatPlanChunks } from './format-plan.js';
export { formatRunChunks } from './format-run.js';
export { jsonReportChunks } from './json-report.js';
export { explainItem, findEnclosingSkips, findItems } from './explain.js';
export { explainEntry, findEntryItems } from './explain-entry.js';
