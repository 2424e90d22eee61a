import { readFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { KbsyncError } from '../shared/errors.js';
import { checkOnDisk } from './checks.js';
import { ConfigError, type ConfigProblem } from './errors.js';
import type { Env } from './interpolate.js';
import { resolveConfig } from './resolve.js';
import type { ResolvedConfig } from './schema.js';
import { validateConfig } from './validate.js';
import { readYamlSource, type Interpolation } from './yaml-source.js';

/** A loaded config and where its environment-sourced values are (for redaction). */
export type LoadedConfig = { config: ResolvedConfig; interpolations: readonly Interpolation[] };

/**
 * Reads, interpolates, validates and resolves a kbsync.yaml.
 * Throws `config_not_found` when the file is missing, or one ConfigError listing every problem.
 */
export function loadConfig(path: string, env: Env = process.env): ResolvedConfig {
  return loadConfigDetailed(path, env).config;
}

/** loadConfig, also returning which values came from `${VAR}` references. */
export function loadConfigDetailed(path: string, env: Env = process.env): LoadedConfig {
  const file = basename(path);
  const configPath = resolve(path);
  const baseDir = dirname(configPath);
  const text = readConfigText(path, configPath, file);

  const source = readYamlSource(text, env);
  if (source.data === undefined) throw new ConfigError(file, source.problems);
  const interpolated = new Set(source.problems.map((p) => p.path));
  const schema = validateConfig(source.data, source.lineOf);
  const disk = checkOnDisk(source.data, baseDir, env, source.lineOf);
  const problems = sortByLine([
    ...source.problems,
    // A failed ${VAR} already explains the value; the schema's complaint about it would be noise.
    ...schema.problems.filter((p) => !interpolated.has(p.path)),
    ...disk.problems,
  ]);
  if (problems.length > 0 || schema.config === undefined) throw new ConfigError(file, problems);
  return { config: resolveConfig(schema.config, configPath, baseDir, env, disk.apiKeyFromFile), interpolations: source.interpolations };
}

function readConfigText(path: string, configPath: string, file: string): string {
  try {
    return readFileSync(configPath, 'utf8');
  } catch (err) {
    const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : 'error';
    if (code === 'ENOENT') {
      // The hint (run kbsync init, or pass -c) is added where errors become text: src/cli/error-table.ts.
      throw new KbsyncError('config_not_found', `no config file at ${path}`, { cause: err });
    }
    if (code === 'EISDIR') throw new KbsyncError('config_not_found', `${path} is a folder, not a config file`, { cause: err });
    throw new ConfigError(file, [{ path: '', line: 1, message: `cannot read the file (${code})` }], { cause: err });
  }
}

function sortByLine(problems: ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>();
  return problems
    .map((p, i) => ({ p, i }))
    .sort((a, b) => a.p.line - b.p.line || a.i - b.i)
    .map(({ p }) => p)
    .filter((p) => {
      const key = `${p.line}\u0000${p.path}\u0000${p.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}
