import { readFileSync, statSync } from 'node:fs';
import type { ConfigPath, ConfigProblem } from './errors.js';
import { formatPath } from './errors.js';
import type { Env } from './interpolate.js';
import { resolveConfigPath } from './resolve.js';
import { isRecord } from './is-record.js';

type Where = (path: ConfigPath) => number;

/**
 * The rules that need the disk: each folder source exists and is a directory; apiKeyFile exists,
 * is private (0600 or stricter) and holds a key. Runs on the raw data, so these problems are
 * reported together with the schema's. Returns the key read from apiKeyFile when it is usable.
 */
export function checkOnDisk(
  data: unknown,
  baseDir: string,
  env: Env,
  lineOf: Where,
): { problems: ConfigProblem[]; apiKeyFromFile: string | undefined } {
  const problems: ConfigProblem[] = [];
  const report = (path: ConfigPath, message: string): void => {
    problems.push({ path: formatPath(path), line: lineOf(path), message });
  };
  const sources = isRecord(data) && Array.isArray(data.sources) ? (data.sources as unknown[]) : [];
  sources.forEach((source, i) => {
    if (!isRecord(source) || typeof source.path !== 'string' || source.path === '') return;
    const message = folderProblem(resolveConfigPath(baseDir, source.path, env));
    if (message !== undefined) report(['sources', i, 'path'], message);
  });
  let apiKeyFromFile: string | undefined;
  const target = isRecord(data) ? data.target : undefined;
  if (isRecord(target) && typeof target.apiKeyFile === 'string' && target.apiKeyFile !== '') {
    const read = readKeyFile(resolveConfigPath(baseDir, target.apiKeyFile, env));
    if ('problem' in read) report(['target', 'apiKeyFile'], read.problem);
    else apiKeyFromFile = read.key;
  }
  return { problems, apiKeyFromFile };
}

function folderProblem(abs: string): string | undefined {
  try {
    return statSync(abs).isDirectory() ? undefined : `not a directory (${abs})`;
  } catch (err) {
    return errnoOf(err) === 'ENOENT' ? `no such directory (looked for ${abs})` : `cannot read ${abs} (${errnoOf(err) ?? 'error'})`;
  }
}

function readKeyFile(abs: string): { key: string } | { problem: string } {
  try {
    const stat = statSync(abs);
    if (!stat.isFile()) return { problem: `not a file (${abs})` };
    // The key file is a secret: refuse it while others can read it, as ssh does for private keys.
    if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
      const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
      return { problem: `${abs} is readable by other users (mode ${mode}); run: chmod 600 ${abs}` };
    }
    const key = readFileSync(abs, 'utf8').trim();
    return key === '' ? { problem: `${abs} is empty` } : { key };
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOENT') return { problem: `no such file (looked for ${abs})` };
    if (code === 'EACCES') return { problem: `cannot read ${abs} (permission denied)` };
    return { problem: `cannot read ${abs} (${code ?? 'error'})` };
  }
}

function errnoOf(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}
