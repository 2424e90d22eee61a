import { KbsyncError } from '../shared/errors.js';
import type { DaemonControls } from '../watch/daemon.js';
import type { DaemonSnapshot } from '../watch/snapshot.js';
import type { DaemonPage } from '../watch/http/page/page-routes.js';
import type { Session } from './session.js';

/**
 * The status page of `kbsync watch --http`: its access rules (the token, from watch.httpToken or
 * KBSYNC_HTTP_TOKEN), what it reads, and its search, which pays through the same door as `kbsync query`.
 * `controls` is filled once the daemon has started; until then the page says it is starting.
 */
export async function createWatchPage(o: {
  session: Session;
  listen: { host: string; port: number };
  token: string | null;
  configPath: string;
  snapshot: () => DaemonSnapshot | null;
  controls: () => DaemonControls | null;
  http: () => { address: string; port: number } | null;
}): Promise<{ page: DaemonPage; noteSnapshot(s: DaemonSnapshot): void; warning: string | null }> {
  const { createPageAccess } = await import('../watch/http/page/access.js');
  const { createPageSource } = await import('../watch/http/page/page-source.js');
  const { createDaemonPage } = await import('../watch/http/page/page-routes.js');
  const { packageVersion } = await import('./program.js');
  if (o.token !== null && o.token.length < 16)
    throw new KbsyncError('usage', 'KBSYNC_HTTP_TOKEN: at least 16 characters (for example: openssl rand -hex 24)');
  const { session } = o;
  const { logger, state } = session;
  const access = createPageAccess({ host: o.listen.host, token: o.token, port: () => o.http()?.port ?? o.listen.port });
  const live = (): Session => ({ ...session, ...(o.controls()?.deps() ?? {}) });
  const source = createPageSource({
    state,
    config: () => live().config,
    snapshot: o.snapshot,
    syncing: () => o.controls()?.running() ?? true,
    version: packageVersion(),
    configPath: o.configPath,
    http: () => o.http()?.address ?? null,
  });
  const starting = (): never => {
    throw new Error('the daemon is starting: ask again after its first sync');
  };
  const page = createDaemonPage({
    access,
    logger,
    deps: {
      model: source.model,
      status: source.status,
      hello: () => {
        const s = o.snapshot();
        return { pid: process.pid, startedAt: s?.startedAt ?? '' };
      },
      explain: (path) => (o.controls() ?? starting()).explain(path),
      retry: (source, path) => (o.controls() ?? starting()).retry(source, path),
      rescan: () => {
        (o.controls() ?? starting()).rescan();
        return { message: 'a rescan starts as soon as no sync runs' };
      },
      query: async (text) => {
        const deps = live();
        const { paidCall, capsOf } = await import('../sync/executor/index.js');
        const { fileSourceNames } = await import('../config/source-kinds.js');
        const { nameResults } = await import('./source-names.js');
        const client = await deps.getClient();
        const answer = await paidCall(state, capsOf(deps.config), {
          kind: 'query',
          reason: `query "${text}" (status page)`,
          perform: async (idempotencyKey) => ({
            value: await client.query({ query: text, topK: 5 }, { idempotencyKey }),
            creditsCharged: null,
          }),
        });
        const results = await nameResults(answer, {
          state,
          sourceNames: fileSourceNames(deps.config.sources),
          client,
          logger: deps.logger,
        });
        source.invalidate();
        const used = state.creditsUsed(null);
        return { results, credits: { day: used.day, month: used.month, caps: capsOf(deps.config) } };
      },
    },
  });
  const warning = access.noToken
    ? `--http ${o.listen.host} is not loopback and no token is set: the status page and /api/* answer 401 (set watch.httpToken or KBSYNC_HTTP_TOKEN)`
    : null;
  return { page, noteSnapshot: source.noteSnapshot, warning };
}
