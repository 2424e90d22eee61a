import type { Series } from './cli-runner.js';
import type { CliSpeedResult } from './cli-speed.js';
import { check, info, type Figure } from './figure.js';
import { ratio, round1 } from './measure.js';

const GROUP = 'kbsync plan, real CLI, fresh process';
/** Issue 4's targets. */
export const UNCHANGED_MAX_MS = 1000;
export const CHANGED_MAX_MS = 1200;
export const STATE_MAX_BYTES_PER_FILE = 300;

/** The rows of docs/benchmarks.md for the end-to-end CLI figures. */
export function cliFigures(r: CliSpeedResult): Figure[] {
  const figures: Figure[] = [];
  const ref = (s: Series) => ({ name: s.name, value: s.medianMs });
  const timed = (s: Series, target: string | null, meets: (ms: number) => boolean, reference: Series | null, extra?: string): Figure => {
    const note = [
      s.problem,
      reference?.problem === null || reference === null ? null : `reference: ${reference.problem}`,
      `runs: ${s.runsMs.join(', ')} ms`,
      extra,
    ]
      .filter((x): x is string => x !== null && x !== undefined)
      .join('; ');
    return {
      group: GROUP,
      name: s.name,
      value: s.medianMs,
      unit: 'ms',
      reference: reference === null ? null : ref(reference),
      ratio: ratio(s.medianMs, reference?.medianMs ?? null),
      target,
      pass: target === null ? null : s.medianMs === null ? false : meets(s.medianMs),
      note,
    };
  };
  const rsyncMs = r.rsync.medianMs;
  const unchangedTarget = `≤ ${UNCHANGED_MAX_MS} ms and below the reference`;
  const meetsUnchanged = (ms: number): boolean => ms <= UNCHANGED_MAX_MS && rsyncMs !== null && ms < rsyncMs;
  figures.push(
    timed(r.unchangedText, unchangedTarget, meetsUnchanged, r.rsync, '`kbsync plan` as people run it'),
    timed(r.unchanged, unchangedTarget, meetsUnchanged, r.rsync, 'the same plan with every item printed as JSON (~100k lines)'),
    timed(r.unchangedEmbedded, null, () => true, r.rsync),
    check(
      GROUP,
      'a warm plan with the embedded target does not start the service',
      r.unchangedEmbedded.problem === null ? !r.unchangedEmbedded.serviceStarted : null,
      r.unchangedEmbedded.serviceStarted ? 'the embedded data folder was created' : 'its data folder was never created',
    ),
    check(
      GROUP,
      'a warm plan does not load undici (nor touch the network: the remote target is an unused loopback port)',
      r.modules.undiciLoaded === null ? null : !r.modules.undiciLoaded,
      r.modules.problem ??
        `${r.modules.count} modules loaded through the ESM loader; packages among them: ${r.modules.notable.join(', ') || 'none'}`,
    ),
    timed(r.changedText, `≤ ${CHANGED_MAX_MS} ms`, (ms) => ms <= CHANGED_MAX_MS, r.rsyncChanged),
    timed(r.changed, `≤ ${CHANGED_MAX_MS} ms`, (ms) => ms <= CHANGED_MAX_MS, r.rsyncChanged),
    timed(
      r.cold,
      'not slower than the reference',
      (ms) => r.sha256sum.medianMs !== null && ms <= r.sha256sum.medianMs,
      r.sha256sum,
      'includes starting the embedded service and listing its (empty) dataset',
    ),
  );
  const perFile = r.seed.trackedFiles === 0 ? null : round1(r.seed.stateBytes / r.seed.trackedFiles);
  const rawBytes = round1(r.seed.avgPathChars + 8 + 8 + 8 + 32);
  figures.push({
    group: GROUP,
    name: `state size per tracked file (${r.seed.trackedFiles} files after a first sync: files, ledger, runs)`,
    value: perFile,
    unit: 'bytes',
    reference: { name: 'the raw fields alone (average path + size, mtime, inode as 8 bytes, sha256 as 32)', value: rawBytes },
    ratio: ratio(perFile, rawBytes),
    target: `≤ ${STATE_MAX_BYTES_PER_FILE} bytes`,
    pass: perFile === null ? false : perFile <= STATE_MAX_BYTES_PER_FILE,
    note: `state.db as left by finishRun: ${r.seed.stateBytes} bytes`,
  });
  figures.push(
    timed(r.emptyPlan, null, () => true, r.nodeStart, 'the fixed part of every figure above'),
    info(GROUP, 'seeding: cold observe of the tree in process (every file hashed, 2 workers)', r.seed.observeMs, 'ms'),
    info(GROUP, 'seeding: first-sync bookkeeping of every file (one transaction)', r.seed.recordMs, 'ms'),
  );
  return figures;
}
