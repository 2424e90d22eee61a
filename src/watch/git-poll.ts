import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { errorText } from '../shared/errors.js';
import { localStatePath } from '../shared/state-url.js';
import { createGitRunner, redactCredentials } from '../sync/sources/git-runner.js';
import { gitScope } from '../sync/sources/index.js';
import type { DaemonContext } from './context.js';

type GitSource = { name: string; url: string; ref: string; subdir: string; pollSeconds: number };

/** The commit `ref` names on the remote (`git ls-remote`), as the sync pins it; null when the listing does not say. */
export type RemoteCommit = (source: { name: string; url: string; ref: string }) => Promise<string | null>;

export type GitPoll = { start(): void; stop(): void };

/**
 * The git sources' polls: every pollSeconds the remote's ref is read (`git ls-remote`, no fetch) and a
 * sync cycle runs only when it names another commit than the one last synced; a poll that cannot tell
 * (the remote unreachable) runs the cycle, whose sync reports why. A source with no checkout yet is
 * cloned by the first cycle: a line says so, as a large clone takes a while.
 */
export function createGitPoll(ctx: DaemonContext, o: { remoteCommit?: RemoteCommit } = {}): GitPoll {
  const { config, logger, state } = ctx.deps;
  const stateDir = dirname(localStatePath(config));
  const remoteCommit = o.remoteCommit ?? lsRemote(stateDir);
  const sources: GitSource[] = config.sources.flatMap((s) =>
    s.git === undefined
      ? []
      : [{ name: s.name, url: s.git.url, ref: s.git.ref, subdir: normalised(s.git.subdir), pollSeconds: s.git.pollSeconds }],
  );
  const timers: NodeJS.Timeout[] = [];
  const polling = new Set<string>();

  const poll = async (s: GitSource): Promise<void> => {
    if (polling.has(s.name)) return;
    polling.add(s.name);
    try {
      let remote: string | null = null;
      try {
        remote = await remoteCommit(s);
      } catch (err) {
        logger.debug({ source: s.name, err: errorText(err) }, 'the git remote could not be listed: the cycle fetches it');
      }
      // A cycle running may be syncing this very commit: compare with what it recorded, once it ends
      // (the polls due meanwhile are skipped), else each long cycle is followed by one that finds nothing.
      while (ctx.scheduler.state().running) await ctx.scheduler.current();
      const last = state.lastSyncedCommit(s.name, gitScope(redactCredentials(s.url), s.subdir));
      if (remote !== null && remote === last) return;
      ctx.scheduler.soon('git-poll');
    } finally {
      polling.delete(s.name);
    }
  };

  return {
    start() {
      for (const s of sources) {
        if (!existsSync(join(stateDir, 'git', s.name, '.git')))
          logger.info(
            { source: s.name, url: redactCredentials(s.url), ref: s.ref },
            'cloning the git source (its first sync): a large repository takes a while',
          );
        timers.push(setInterval(() => void poll(s), s.pollSeconds * 1000));
      }
    },
    stop() {
      for (const t of timers.splice(0)) clearInterval(t);
    },
  };
}

/** `git ls-remote` of the ref: the branch, else the tag (peeled), else the ref itself when it is a full commit id. */
function lsRemote(cwd: string): RemoteCommit {
  return async (s) => {
    const patterns = s.ref === 'HEAD' ? ['HEAD'] : [`refs/heads/${s.ref}`, `refs/tags/${s.ref}`, `refs/tags/${s.ref}^{}`];
    const out = await createGitRunner(cwd, s.name)(['ls-remote', '--', s.url, ...patterns]);
    const refs = new Map(
      out
        .split('\n')
        .map((l) => l.split('\t'))
        .filter((p): p is [string, string] => p.length === 2)
        .map(([commit, name]) => [name.trim(), commit] as const),
    );
    for (const name of patterns.includes('HEAD') ? ['HEAD'] : [`refs/heads/${s.ref}`, `refs/tags/${s.ref}^{}`, `refs/tags/${s.ref}`]) {
      const commit = refs.get(name);
      if (commit !== undefined) return commit;
    }
    return /^[0-9a-f]{40}$/i.test(s.ref) ? s.ref.toLowerCase() : null;
  };
}

/** The subdir as the sync records it (no leading, trailing or doubled slashes, no `.`). */
function normalised(subdir: string | undefined): string {
  return (subdir ?? '')
    .split('/')
    .filter((p) => p !== '' && p !== '.')
    .join('/');
}
