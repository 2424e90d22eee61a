import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { REPO_ROOT } from './build-dist.js';

/**
 * vitest globalSetup of each tier but unit: the commands the tier needs from the machine (the list in
 * scripts/ci-deps.sh) are there, or the run stops at once with the command that installs them,
 * instead of a test failing later on a missing binary (or installing it itself).
 */
export default function setup(project: TestProject): void {
  const check = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'ci-deps.sh'), '--check', project.name], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`${check.stdout}${check.stderr}`.trim());
}
