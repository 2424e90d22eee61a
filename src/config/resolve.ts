import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { isPostgresUrl } from '../shared/state-url.js';
import type { Env } from './interpolate.js';
import type { Config, ResolvedConfig } from './schema.js';

/** An absolute path for a path written in the config: `~/` is the home folder, relative is against baseDir. */
export function resolveConfigPath(baseDir: string, written: string, env: Env): string {
  if (written === '~' || written.startsWith('~/')) return resolve(env.HOME ?? homedir(), written.slice(2));
  return resolve(baseDir, written);
}

/** True for a git URL that is a relative local path (`./repo`, `../repo`), not a remote address. */
function isRelativeLocalPath(url: string): boolean {
  return url === '.' || url === '..' || url.startsWith('./') || url.startsWith('../') || url.startsWith('~/');
}

/** The config with every path made absolute against the config file's folder, and the API key from apiKeyFile. */
export function resolveConfig(
  config: Config,
  configPath: string,
  baseDir: string,
  env: Env,
  apiKeyFromFile: string | undefined,
): ResolvedConfig {
  const at = (p: string): string => resolveConfigPath(baseDir, p, env);
  const { target } = config;
  return {
    ...config,
    configPath,
    baseDir,
    // A PostgreSQL URL is not a path.
    state: isPostgresUrl(config.state) ? config.state : at(config.state),
    target: {
      ...target,
      dataDir: at(target.dataDir),
      ...(target.apiKeyFile === undefined ? {} : { apiKeyFile: at(target.apiKeyFile), apiKey: apiKeyFromFile }),
    },
    sources: config.sources.map((s) => ({
      ...s,
      // Each source carries the types it converts: its own list, else the top-level one.
      convert: s.convert ?? config.convert,
      ...(s.path === undefined ? {} : { path: at(s.path) }),
      ...(s.git === undefined || isAbsolute(s.git.url) || !isRelativeLocalPath(s.git.url) ? {} : { git: { ...s.git, url: at(s.git.url) } }),
    })),
  };
}
