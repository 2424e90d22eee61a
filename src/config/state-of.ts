import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { isPostgresUrl, localStatePath } from '../shared/state-url.js';
import type { Env } from './interpolate.js';
import { isRecord } from './is-record.js';
import { resolveConfigPath } from './resolve.js';
import { readYamlSource } from './yaml-source.js';

/**
 * The local state path a config file names, read leniently from a file that does not validate (a YAML
 * error elsewhere, a bad field): what `kbsync status` needs to find a running daemon's status file.
 * The default state when the file names none or cannot be read at all.
 */
export function statePathOfBrokenConfig(path: string, env: Env): string {
  const configPath = resolve(path);
  const baseDir = dirname(configPath);
  let written: unknown;
  try {
    const text = readFileSync(configPath, 'utf8');
    const source = readYamlSource(text, env);
    // After a YAML error the lenient parse still holds what came before it.
    const data: unknown = source.data ?? parseDocument(text).toJS();
    written = isRecord(data) ? data.state : undefined;
  } catch {
    written = undefined;
  }
  const state = typeof written === 'string' && written !== '' ? written : '.kbsync/state.db';
  return localStatePath({ state: isPostgresUrl(state) ? state : resolveConfigPath(baseDir, state, env), baseDir });
}
