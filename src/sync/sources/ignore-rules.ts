import { readFileSync } from 'node:fs';
import ignore, { type Ignore } from 'ignore';

/** Ignore files honoured in every folder of a source, in the order their rules apply (later wins). */
export const IGNORE_FILE_NAMES: readonly string[] = ['.gitignore', '.kbsyncignore'];

/**
 * The rules of one ignore file, relative to the folder it sits in ("" for the source root).
 * `fileFilter` is a quick superset test on a file's base name: when it fails, no rule of this file
 * can ignore that file (see fileFilterOf), and the `ignore` package is not asked at all.
 */
export type IgnoreLevel = { dir: string; file: string; rules: Ignore; fileFilter: RegExp | null };

/** Parses one ignore file's text into a level (case-sensitive, as git is on Linux). */
export function parseIgnoreLevel(dir: string, file: string, text: string): IgnoreLevel {
  return { dir, file, rules: ignore({ ignorecase: false }).add(text), fileFilter: fileFilterOf(text) };
}

/**
 * Why: asking `ignore` costs microseconds per path (it caches every path it sees), which on 100k
 * files is a third of the walk. A file is ignored only if some positive rule that can match a
 * file (not `!negated`, not `dir/`-only) matches it, and such a rule must match the file's base
 * name with its own last segment. This builds one regex of those last segments, loosened so it
 * can only say "maybe" too often, never too rarely: `*` → `.*`, `?` and `[...]` → `.`.
 * Segments that start with `*` (`*.log`, the common case) are tested as suffixes: `(?:\.log)$`
 * rather than `^(?:.*\.log)$`, which V8 runs by scanning to the end and back for each name.
 * Null when the file has no such rule.
 */
export function fileFilterOf(text: string): RegExp | null {
  const whole: string[] = [];
  const suffixes: string[] = [];
  for (const raw of text.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    let line = raw;
    while (line.endsWith(' ') && !line.endsWith('\\ ')) line = line.slice(0, -1);
    if (line === '' || line.startsWith('#') || line.startsWith('!') || line.endsWith('/')) continue;
    const segments = line.split('/');
    const loose = loosen(segments[segments.length - 1] ?? '');
    if (loose.startsWith('.*')) suffixes.push(loose.slice(2));
    else whole.push(loose);
  }
  const parts = [...(whole.length > 0 ? [`^(?:${whole.join('|')})$`] : []), ...(suffixes.length > 0 ? [`(?:${suffixes.join('|')})$`] : [])];
  return parts.length === 0 ? null : new RegExp(parts.join('|'));
}

function loosen(segment: string): string {
  let out = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i] as string;
    if (c === '\\') out += i + 1 < segment.length ? escapeRegExp(segment[++i] as string) : '.*';
    else if (c === '*') out += '.*';
    else if (c === '?') out += '.';
    else if (c === '[' && segment.indexOf(']', i + 2) > 0) {
      out += '.';
      i = segment.indexOf(']', i + 2);
    } else out += escapeRegExp(c);
  }
  return out;
}

function escapeRegExp(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}

/**
 * Reads the ignore files present in one folder. Throws (with the fs error as cause) when one exists
 * but cannot be read: the caller then skips the whole folder rather than upload what it may exclude.
 */
export function readIgnoreLevels(absDir: string, dir: string, presentNames: ReadonlySet<string>): IgnoreLevel[] {
  const levels: IgnoreLevel[] = [];
  for (const file of IGNORE_FILE_NAMES) {
    if (!presentNames.has(file)) continue;
    const text = readFileSync(`${absDir}/${file}`, 'utf8');
    if (text.trim() !== '') levels.push(parseIgnoreLevel(dir, file, text));
  }
  return levels;
}

/**
 * Which rule ignores a path, as a detail ("matches docs/.gitignore: drafts/"), or null.
 * `levels` are those of the path's ancestor folders, root first; the last rule that matches wins,
 * so a deeper file (or a later `!negation`) overrides a shallower one. The caller tests parent
 * folders before their contents (as git does, a file in an ignored folder cannot be re-included).
 * `baseName`: a file's last path segment, when the caller has it.
 */
export function matchIgnoreRules(levels: readonly IgnoreLevel[], path: string, isDir: boolean, baseName?: string): string | null {
  let detail: string | null = null;
  const base = isDir ? '' : (baseName ?? path.slice(path.lastIndexOf('/') + 1));
  for (const level of levels) {
    // Not ignored so far and no rule here can ignore this file: this level cannot change the answer.
    if (!isDir && detail === null && (level.fileFilter === null || !level.fileFilter.test(base))) continue;
    const sub = level.dir === '' ? path : path.slice(level.dir.length + 1);
    const result = level.rules.test(isDir ? `${sub}/` : sub);
    if (result.ignored) {
      const where = level.dir === '' ? level.file : `${level.dir}/${level.file}`;
      detail = `matches ${where}: ${result.rule?.pattern ?? '?'}`;
    } else if (result.unignored) {
      detail = null;
    }
  }
  return detail;
}

/**
 * For a flat list of paths (a git tree): a checker that applies the levels of every ancestor folder,
 * testing each folder (cached) before the path itself.
 */
export function createPathIgnoreChecker(levelsByDir: ReadonlyMap<string, IgnoreLevel[]>): (path: string) => string | null {
  if (levelsByDir.size === 0) return () => null;
  const dirCache = new Map<string, { levels: IgnoreLevel[]; ignored: string | null }>();
  const root = { levels: levelsByDir.get('') ?? [], ignored: null };

  const dirState = (dir: string): { levels: IgnoreLevel[]; ignored: string | null } => {
    if (dir === '') return root;
    const cached = dirCache.get(dir);
    if (cached !== undefined) return cached;
    const slash = dir.lastIndexOf('/');
    const parent = dirState(slash < 0 ? '' : dir.slice(0, slash));
    const ignored = parent.ignored ?? matchIgnoreRules(parent.levels, dir, true);
    const own = levelsByDir.get(dir);
    const state = { levels: own === undefined ? parent.levels : [...parent.levels, ...own], ignored };
    dirCache.set(dir, state);
    return state;
  };

  return (path) => {
    const slash = path.lastIndexOf('/');
    const parent = dirState(slash < 0 ? '' : path.slice(0, slash));
    return parent.ignored ?? matchIgnoreRules(parent.levels, path, false);
  };
}
