import type { Command } from 'commander';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KnowledgeClient } from '../client/index.js';
import type { ResolvedConfig } from '../config/schema.js';
import { isKbsyncError } from '../shared/errors.js';
import { isPostgresUrl, localStatePath } from '../shared/state-url.js';
import { isIntelligenceSource } from '../config/source-kinds.js';
import type { Logger } from '../shared/logger.js';
import type { SyncDeps } from '../sync/executor/index.js';
import type { StateStore } from '../sync/state/index.js';
import { loadCommandConfig } from './config-option.js';
import type { CliContext } from './context.js';
import type { OpenTarget } from './target.js';

/** What a sync-side command works with: config, state, logger, and a target opened on first use. */
export type Session = SyncDeps & { ctx: CliContext; getTarget(): Promise<OpenTarget> };

/**
 * Loads the config, opens the state (one writer at a time; a corrupt state is moved aside and rebuilt
 * from the remote listing), runs `fn`, and closes everything, the embedded service included.
 * `lock: false` opens the state as a view, beside the writer that holds it (`status` beside a running `watch`).
 * `access` is for commands that work beside a runner (see StateAccess).
 */
export async function withSession<T>(
  cmd: Command,
  ctx: CliContext,
  fn: (session: Session) => Promise<T>,
  o: { lock?: boolean; access?: StateAccess; repairs?: boolean } = {},
): Promise<T> {
  const { config } = await loadCommandConfig(cmd, ctx);
  const logger = await ctx.getLogger();
  const state = await openStateFor(config, ctx, logger, {
    lock: o.lock !== false,
    access: o.access ?? 'writer',
    command: cmd.name(),
    repairs: o.repairs !== false && o.access === 'reader',
  });
  let target: Promise<OpenTarget> | undefined;
  // Only a writer uploads: the embedded service of a command beside it leaves its background work to the daemon's.
  const background = o.lock !== false && (o.access ?? 'writer') === 'writer';
  const getTarget = (): Promise<OpenTarget> => (target ??= import('./target.js').then((m) => m.openTarget(config, logger, { background })));
  const getClient = async (): Promise<KnowledgeClient> => (await getTarget()).client;
  try {
    return await fn({ config, state, logger, getClient, getTarget, ctx });
  } finally {
    try {
      if (target !== undefined) await (await target).close();
    } finally {
      state.close();
    }
  }
}

/**
 * How a command opens the state. `writer`: it takes the writer lock (state_locked when another holds
 * it; one held by a command below is waited for). `reader` (it only reads: plan, explain, audit, status)
 * and `guest` (it records paid calls of its own: query, chat, check, agents): beside the lock, read-only,
 * or writing its paid calls in short transactions (sync/state/sqlite/open.ts). They take the writer
 * lock only for what needs it first, when no runner holds it: a state to create or migrate (then
 * released at once), and, for a reader that repairs (plan, explain, audit), what its plan would repair
 * (writerRepairs). That lock says it yields: a runner started meanwhile waits for it, never exits.
 * On PostgreSQL a guest is a runner of no source (it locks none).
 */
export type StateAccess = 'writer' | 'reader' | 'guest';

/** withSession for a command that only reads (plan, explain, audit): beside a runner, the state is opened read-only. */
export function withReaderSession<T>(cmd: Command, ctx: CliContext, fn: (session: Session) => Promise<T>): Promise<T> {
  return withSession(cmd, ctx, fn, { access: 'reader' });
}

/** withSession for a command that records paid calls of its own (query, chat, check, agents): beside a runner, as a guest. */
export function withGuestSession<T>(cmd: Command, ctx: CliContext, fn: (session: Session) => Promise<T>): Promise<T> {
  return withSession(cmd, ctx, fn, { access: 'guest' });
}

async function openStateFor(
  config: ResolvedConfig,
  ctx: CliContext,
  logger: Logger,
  o: { lock: boolean; access: StateAccess; command: string; repairs: boolean; yields?: boolean },
): Promise<StateStore> {
  const { openState, moveAsideCorrupt, yieldingLockHolder } = await import('../sync/state/index.js');
  // With a PostgreSQL state shared by many runners, this process works the outbox ops of its own sources only.
  const scope = config.sources
    .map((s) => s.name)
    .sort()
    .join(',');
  if (!o.lock) return openState(config.state, { logger, lock: false, scope });
  const pg = isPostgresUrl(config.state);
  if (pg && o.access === 'guest') return openState(config.state, { logger, scope: '' });
  if (o.access !== 'writer') {
    const beside = (): StateStore =>
      pg
        ? openState(config.state, { logger, lock: false, scope })
        : openState(config.state, { logger, access: o.access as 'reader' | 'guest' });
    const { readRunningDaemon } = await import('../watch/status-file.js');
    if (readRunningDaemon(localStatePath(config)) !== null) return beside();
    const settled = pg ? null : await settledBeside(config, beside, o.repairs);
    if (settled !== null) return settled;
    try {
      const writer = await openStateFor(config, ctx, logger, { ...o, access: 'writer', yields: !pg });
      if (o.repairs || pg) return writer;
      // Created or migrated: the rest is read beside, and the lock is free again for a runner.
      writer.close();
      return beside();
    } catch (err) {
      if (isKbsyncError(err, 'state_locked')) return besideWhenMigrated(beside);
      throw err;
    }
  }
  const open = (): StateStore => {
    const yields = o.yields === true ? { yields: true } : {};
    try {
      const state = openState(config.state, { logger, scope, command: o.command, ...yields });
      if (state.lockTakenOver !== null)
        logger.warn({ pid: state.lockTakenOver.pid }, 'took over the lock of a kbsync that is no longer running');
      return state;
    } catch (err) {
      if (!isKbsyncError(err, 'state_corrupt')) throw err;
      const movedTo = moveAsideCorrupt(config.state);
      ctx.stderr.write(`kbsync: the state database was corrupt; moved it to ${movedTo} and rebuilding from the remote listing\n`);
      return openState(config.state, { logger, scope, command: o.command, ...yields });
    }
  };
  // A runner waits for a command that took the lock only to read (status, plan, query...): it ends soon.
  const deadline = Date.now() + YIELDING_HOLDER_WAIT_MS;
  for (let told = false; ; told = true) {
    try {
      return open();
    } catch (err) {
      const holder = o.yields === true || !isKbsyncError(err, 'state_locked') ? null : yieldingLockHolder(config.state);
      if (holder === null || Date.now() > deadline) throw err;
      if (!told) logger.info({ pid: holder.pid, command: holder.command }, 'waiting for the state lock of a command that reads');
      await sleep(100);
    }
  }
}

/**
 * `beside()` once the runner that holds the lock has created or migrated the state it is starting on
 * (until then the state is missing or of an older schema: state_unavailable), for up to MIGRATION_WAIT_MS.
 */
async function besideWhenMigrated(beside: () => StateStore): Promise<StateStore> {
  const deadline = Date.now() + MIGRATION_WAIT_MS;
  for (;;) {
    try {
      return beside();
    } catch (err) {
      if (!isKbsyncError(err, 'state_unavailable') || Date.now() > deadline) throw err;
      await sleep(100);
    }
  }
}

const MIGRATION_WAIT_MS = 10_000;

/** How long a runner waits for a reading command's hold of the writer lock before it is refused (state_locked). */
const YIELDING_HOLDER_WAIT_MS = 60_000;

/**
 * The SQLite state opened beside the lock (`beside`) when that is all the command needs: the state
 * exists at this kbsync's schema and, for a reader that `repairs`, its plan would repair nothing.
 * Null when the writer's lock is needed first.
 */
async function settledBeside(config: ResolvedConfig, beside: () => StateStore, repairs: boolean): Promise<StateStore | null> {
  if (statSync(resolve(config.state), { throwIfNoEntry: false })?.isFile() !== true) return null;
  let state: StateStore;
  try {
    state = beside();
  } catch {
    // Of an older schema, damaged, unreadable...: the writer's open repairs it or says what is wrong.
    return null;
  }
  if (!repairs) return state;
  const { writerRepairs } = await import('../sync/executor/writer-repairs.js');
  if (writerRepairs(state, { adoptEntries: config.sources.some(isIntelligenceSource) }).length === 0) return state;
  state.close();
  return null;
}
