import type { Command } from 'commander';
import type { KnowledgeClient } from '../client/index.js';
import type { ResolvedConfig } from '../config/schema.js';
import { isKbsyncError } from '../shared/errors.js';
import { isPostgresUrl, localStatePath } from '../shared/state-url.js';
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
  o: { lock?: boolean; access?: StateAccess } = {},
): Promise<T> {
  const { config } = await loadCommandConfig(cmd, ctx);
  const logger = await ctx.getLogger();
  const state = await openStateFor(config, ctx, logger, { lock: o.lock !== false, access: o.access ?? 'writer', command: cmd.name() });
  let target: Promise<OpenTarget> | undefined;
  // Only a writer uploads: the embedded service of a command beside it leaves processing to the daemon's.
  const processing = o.lock !== false && (o.access ?? 'writer') === 'writer';
  const getTarget = (): Promise<OpenTarget> => (target ??= import('./target.js').then((m) => m.openTarget(config, logger, { processing })));
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
 * it). `reader` (it only reads: plan, explain, audit) and `guest` (it records paid calls of its own:
 * query, chat, check, agents): the writer lock when it is free (so that alone it repairs as a writer
 * does); beside a runner that holds it, read-only, or writing its paid calls in short transactions
 * (sync/state/sqlite/open.ts). On PostgreSQL a guest is a runner of no source (it locks none).
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
  o: { lock: boolean; access: StateAccess; command: string },
): Promise<StateStore> {
  const { openState, moveAsideCorrupt } = await import('../sync/state/index.js');
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
    try {
      return await openStateFor(config, ctx, logger, { ...o, access: 'writer' });
    } catch (err) {
      if (isKbsyncError(err, 'state_locked')) return beside();
      throw err;
    }
  }
  try {
    const state = openState(config.state, { logger, scope, command: o.command });
    if (state.lockTakenOver !== null)
      logger.warn({ pid: state.lockTakenOver.pid }, 'took over the lock of a kbsync that is no longer running');
    return state;
  } catch (err) {
    if (!isKbsyncError(err, 'state_corrupt')) throw err;
    const movedTo = moveAsideCorrupt(config.state);
    ctx.stderr.write(`kbsync: the state database was corrupt; moved it to ${movedTo} and rebuilding from the remote listing\n`);
    return openState(config.state, { logger, scope, command: o.command });
  }
}
