import { readFileSync } from 'node:fs';
import ignore, { type Ignore } from 'ignore';

/** Ignore files honoured in every folder of a source, in the order their rules apply (later wins). */
export const IGNORE_FILE_NAMES: readonly string[] = ['.gitignore', '.kbsyncignore'];

/** The rules of one ignore file, relative to the folder it sits in ("" for the source root). */
export type IgnoreLevel = { dir: string; file: string; rules: Ignore };

/** Parses one ignore file's text into a level (case-sensitive, as git is on Linux). */
export function parseIgnoreLevel(dir: string, file: string, text: string): IgnoreLevel {
  return { dir, file, rules: ignore({ ignorecase: false }).add(text) };
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
 */
export function matchIgnoreRules(levels: readonly IgnoreLevel[], path: string, isDir: boolean): string | null {
  let detail: string | null = null;
  for (const level of levels) {
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
