import { createHash } from 'node:crypto';
import type { Plan } from '../../src/shared/plans.js';
import { remoteNameFor, trackedKey } from '../../src/sync/tracked/keys.js';
import { summarize } from '../../src/sync/planner/totals.js';
import type {
  BudgetWindow,
  Observation,
  ObservedFile,
  PlanInput,
  SyncPlan,
  RemoteCopy,
  RemoteStatus,
  RunItem,
  RunResult,
  SkippedPath,
  SkipReason,
  TrackedFile,
} from '../../src/sync/types.js';

/** Builders for planner inputs: `fakeObservation().file('docs/a.md', { size, sha })`, `fakeState().tracked(...)`. */

/** A deterministic fake SHA-256 (hex) for a content label: same label, same hash. */
export function fakeSha(label: string): string {
  return createHash('sha256').update(label).digest('hex');
}

type FileOpts = { source?: string; size?: number; sha?: string | null; content?: string; mtimeNs?: string; inode?: number };

/** Observation builder. Default content of a file is its path, so distinct paths have distinct content. */
export function fakeObservation(sourceNames: string[] = ['docs']) {
  const files: ObservedFile[] = [];
  const skipped: SkippedPath[] = [];
  const sources = new Set(sourceNames);
  let inode = 1000;
  const builder = {
    file(path: string, o: FileOpts = {}) {
      const source = o.source ?? 'docs';
      sources.add(source);
      files.push({
        source,
        path,
        absPath: `/src/${source}/${path}`,
        size: o.size ?? 100,
        mtimeNs: o.mtimeNs ?? '1700000000000000000',
        inode: o.inode ?? inode++,
        sha256: o.sha === undefined ? fakeSha(o.content ?? `${source}/${path}`) : o.sha,
      });
      return builder;
    },
    skipped(path: string, reason: SkipReason, o: { source?: string; detail?: string; size?: number | null } = {}) {
      const source = o.source ?? 'docs';
      sources.add(source);
      skipped.push({ source, path, reason, detail: o.detail ?? '', size: o.size ?? null });
      return builder;
    },
    build(): Observation {
      return {
        files: [...files],
        skipped: [...skipped],
        sources: [...sources].map((name) => ({ name, kind: 'folder' as const, root: `/src/${name}`, commit: null, scope: null })),
      };
    },
  };
  return builder;
}

type TrackedOpts = Partial<Omit<TrackedFile, 'path'>> & { content?: string; remoteStatus?: RemoteStatus | null };

/** Tracked-state builder; defaults match fakeObservation's (same path → same content, processed remote copy). */
export function fakeState(multiSource = false) {
  const rows = new Map<string, TrackedFile>();
  let id = 1;
  const builder = {
    tracked(path: string, o: TrackedOpts = {}) {
      const source = o.source ?? 'docs';
      const row: TrackedFile = {
        source,
        path,
        size: o.size ?? 100,
        mtimeNs: o.mtimeNs ?? '1600000000000000000',
        inode: o.inode ?? 1,
        sha256: o.sha256 ?? fakeSha(o.content ?? `${source}/${path}`),
        remoteName: o.remoteName ?? remoteNameFor(source, path, multiSource),
        remoteId: o.remoteId === undefined ? String(id++) : o.remoteId,
        remoteStatus: o.remoteStatus === undefined ? 'processed' : o.remoteStatus,
        reprocessAttempts: o.reprocessAttempts ?? 0,
        remoteError: o.remoteError ?? null,
        lastAction: o.lastAction ?? 'upload',
        lastReason: o.lastReason ?? 'new file',
        updatedAt: o.updatedAt ?? '2024-05-01T00:00:00.000Z',
      };
      rows.set(trackedKey(source, path), row);
      return builder;
    },
    build(): Map<string, TrackedFile> {
      return new Map(rows);
    },
  };
  return builder;
}

/** A remote listing entry. */
export function remoteCopy(name: string, o: { id?: string; sha?: string | null; content?: string; status?: string } = {}): RemoteCopy {
  return {
    id: o.id ?? `r-${name}`,
    name,
    sha256: o.sha === undefined ? fakeSha(o.content ?? name) : o.sha,
    status: o.status ?? 'processed',
  };
}

/** A budget with generous caps unless given. */
export function fakeBudget(caps: Partial<BudgetWindow['caps']> = {}, used: Partial<BudgetWindow['used']> = {}): BudgetWindow {
  return {
    caps: { run: 1_000_000, day: 1_000_000, month: 1_000_000, ...caps },
    used: { run: 0, day: 0, month: 0, ...used },
  };
}

export const FIXED_NOW = new Date('2024-06-01T12:00:00.000Z');

/** A complete PlanInput with defaults: basic plan, no size override, generous budget, threshold 20, 2 reprocesses. */
export function planInput(over: Partial<PlanInput> & { plan?: Plan } = {}): PlanInput {
  return {
    observation: over.observation ?? fakeObservation().build(),
    tracked: over.tracked ?? new Map(),
    remote: over.remote ?? null,
    ...(over.held !== undefined ? { held: over.held } : {}),
    plan: over.plan ?? 'basic',
    limits: over.limits ?? { maxFileBytes: null },
    budget: over.budget ?? fakeBudget(),
    reindexMinChangedFiles: over.reindexMinChangedFiles ?? 20,
    maxReprocessAttempts: over.maxReprocessAttempts ?? 2,
    multiSource: over.multiSource ?? false,
    now: over.now ?? FIXED_NOW,
  };
}

/** The plan run with no charge: items `errorOf` names failed with that error, the others done; the reindex done. */
export function fakeRun(plan: SyncPlan, errorOf: (item: SyncPlan['items'][number]) => string | null): RunResult {
  const items: RunItem[] = plan.items.map((i) => {
    const error = errorOf(i);
    return error === null
      ? { ...i, outcome: 'done', creditsCharged: 0, error: null }
      : { ...i, outcome: 'failed', creditsCharged: 0, error };
  });
  const reindex = { ...plan.reindex, outcome: 'done' as const, creditsCharged: 0, error: null };
  return { kind: 'run', startedAt: plan.plannedAt, finishedAt: plan.plannedAt, items, totals: summarize(items, reindex), reindex };
}
