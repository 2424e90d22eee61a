import type { Command } from 'commander';
import type { KnowledgeClient } from '../client/index.js';
import type { ResolvedConfig } from '../config/schema.js';
import { isKbsyncError } from '../shared/errors.js';
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
 * `lock: false` opens the state as a read-only view, beside the writer that holds it (`status` beside a running `watch`).
 */
export async function withSession<T>(
  cmd: Command,
  ctx: CliContext,
  fn: (session: Session) => Promise<T>,
  o: { lock?: boolean } = {},
): Promise<T> {
  const { config } = await loadCommandConfig(cmd, ctx);
  const logger = await ctx.getLogger();
  const state = await openStateFor(config, ctx, logger, o.lock !== false);
  let target: Promise<OpenTarget> | undefined;
  const getTarget = (): Promise<OpenTarget> => (target ??= import('./target.js').then((m) => m.openTarget(config, logger)));
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

async function openStateFor(config: ResolvedConfig, ctx: CliContext, logger: Logger, lock: boolean): Promise<StateStore> {
  const { openState, moveAsideCorrupt } = await import('../sync/state/index.js');
  // With a PostgreSQL state shared by many runners, this process works the outbox ops of its own sources only.
  const scope = config.sources
    .map((s) => s.name)
    .sort()
    .join(',');
  if (!lock) return openState(config.state, { logger, lock: false, scope });
  try {
    const state = openState(config.state, { logger, scope });
    if (state.lockTakenOver !== null)
      logger.warn({ pid: state.lockTakenOver.pid }, 'took over the lock of a kbsync that is no longer running');
    return state;
  } catch (err) {
    if (!isKbsyncError(err, 'state_corrupt')) throw err;
    const movedTo = moveAsideCorrupt(config.state);
    ctx.stderr.write(`kbsync: the state database was corrupt; moved it to ${movedTo} and rebuilding from the remote listing\n`);
    return openState(config.state, { logger, scope });
  }
}
