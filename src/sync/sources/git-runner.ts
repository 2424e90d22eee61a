import { simpleGit } from 'simple-git';
import { errorText, KbsyncError } from '../../shared/errors.js';

/**
 * The one door to git for the sources. Every command runs with these settings, whatever the user's
 * or the repository's config says: hooks never run, no fsmonitor program, no submodule recursion,
 * no `ext::` transport, content checked out byte for byte, and no prompt that would hang a daemon.
 */
const SAFE_CONFIG = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'submodule.recurse=false',
  'protocol.ext.allow=never',
  'core.autocrlf=false',
  'advice.detachedHead=false',
];

/**
 * simple-git refuses some settings unless allowed. We allow exactly: our own SAFE_CONFIG above, and
 * the git variables of the user's own environment (their config files, ssh command, askpass, proxy),
 * which are as trusted as the user's own `git`. Nothing here comes from a repository or a URL.
 */
const ALLOWED_UNSAFE = {
  allowUnsafeHooksPath: true,
  allowUnsafeFsMonitor: true,
  allowUnsafeProtocolOverride: true,
  allowUnsafeConfigPaths: true,
  allowUnsafeConfigEnvCount: true,
  allowUnsafeSshCommand: true,
  allowUnsafeAskPass: true,
  allowUnsafeGitProxy: true,
  allowUnsafeTemplateDir: true,
};

/** Variables that would point git at another repository or run programs we never need. */
const DROPPED_ENV = new Set([
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_EXTERNAL_DIFF',
  'GIT_EDITOR',
  'GIT_SEQUENCE_EDITOR',
  'GIT_PAGER',
  'EDITOR',
  'VISUAL',
  'PAGER',
  'PREFIX',
]);

function gitEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !DROPPED_ENV.has(key.toUpperCase())) env[key] = value;
  }
  env.GIT_TERMINAL_PROMPT = '0';
  return env;
}

/** Runs one git command in `cwd`; stdout on success, `git_failed` (with git's stderr, credentials redacted) otherwise. */
export type GitRun = (args: readonly string[]) => Promise<string>;

/** A git runner for one working folder (`label` names the source in error messages). */
export function createGitRunner(cwd: string, label: string): GitRun {
  const git = simpleGit({ baseDir: cwd, config: SAFE_CONFIG, unsafe: ALLOWED_UNSAFE, maxConcurrentProcesses: 4 }).env(gitEnv());
  return async (args) => {
    try {
      return await git.raw([...args]);
    } catch (err) {
      const text = redactCredentials(errorText(err)).trim();
      // No git at all is not a problem of the URL, ref or credentials: say so.
      const message = /spawn git ENOENT/.test(text) ? `git is not installed or not on PATH (${text.split('\n')[0]}): install git` : text;
      // The cause is rebuilt from the redacted text: git's own message may hold a token from the URL.
      throw new KbsyncError('git_failed', `source "${label}": git ${args[0] ?? ''} failed: ${message}`, { cause: new Error(message) });
    }
  };
}

/** Replaces the credentials of any `scheme://user:token@host` in a text by `***`. */
export function redactCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1***@');
}
