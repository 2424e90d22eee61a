/** CI outputs of sync, check and audit: `--report-md FILE` (also appended to $GITHUB_STEP_SUMMARY) and `--junit FILE`. */
export type { CiCase, CiReport } from './model.js';
export { checkCiReportTargets, writeCiReports, type CiReportOptions } from './write.js';
