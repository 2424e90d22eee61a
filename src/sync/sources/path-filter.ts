import picomatch from 'picomatch';
import { convertTypeOfExtension, extensionOf, isSupportedExtension, type ConvertType } from '../../shared/file-types.js';
import type { SkipReason } from '../types.js';
import { lockFileOf } from './lock-files.js';
import { secretPatternOf } from './secrets.js';

/**
 * Include/exclude globs (fast-glob semantics: matched against the whole source-relative path, so
 * `*.md` is the root only and `**\/*.md` everywhere; dot files match).
 */
export type PathFilter = {
  /** False when no include glob can match anything under this folder (it need not be walked). */
  mayIncludeUnder(dir: string): boolean;
  /** The exclude glob that removes a whole folder (`drafts/**` or `drafts`), or null. */
  folderExcludedBy(dir: string): string | null;
  /**
   * What to do with a file: `outside` (not in the include globs: not part of the source, not
   * listed), `candidate`, or a skip with its reason. `ignoredBy` gives the ignore-file rule, if any.
   * `folderChecked`: the caller knows the path's folder holds no control character
   * (hasControlCharacter, once per folder), so only the base name is tested for one.
   */
  classifyFile(
    path: string,
    baseName: string,
    ignoredBy: (path: string, baseName: string) => string | null,
    folderChecked?: boolean,
  ): FileVerdict;
};

/** Folders never descended nor uploaded, whatever the globs say; each is listed once as ignored. */
export const NEVER_DESCEND: ReadonlyMap<string, string> = new Map([
  ['.git', 'git metadata: never synced'],
  ['node_modules', 'node_modules: never synced'],
]);

export type FileVerdict = 'outside' | 'candidate' | { reason: SkipReason; detail: string };

const MATCH_ALL = new Set(['**', '**/*']);
const opts = { dot: true };

/**
 * Compiles include and exclude globs once, for millions of tests. A file of a type in `convert` is a
 * candidate (converted to Markdown before upload); of another convertible type, unsupported with a hint.
 */
export function createPathFilter(include: readonly string[], exclude: readonly string[], convert: readonly ConvertType[] = []): PathFilter {
  const converted = new Set<string>(convert);
  const includesAll = include.some((g) => MATCH_ALL.has(g));
  const isIncluded = includesAll ? () => true : picomatch(include, opts);
  const includeBases = include.map((g) => picomatch.scan(g, opts)).map((s) => (s.negated ? '' : s.base));
  const excludes = exclude.map((pattern) => ({ pattern, test: picomatch(pattern, opts) }));
  const excludedBy = (path: string): string | null => excludes.find((e) => e.test(path))?.pattern ?? null;

  return {
    mayIncludeUnder: (dir) =>
      includesAll ||
      dir === '' ||
      includeBases.some((base) => base === '' || base === dir || base.startsWith(`${dir}/`) || dir.startsWith(`${base}/`)),
    folderExcludedBy: excludedBy,
    classifyFile(path, baseName, ignoredBy, folderChecked = false) {
      if (!isIncluded(path)) return 'outside';
      // The extension once, for the secret test and the type test (two slices and a lower-casing a file, not four).
      const ext = extensionOf(baseName);
      const secret = secretPatternOf(baseName, ext);
      if (secret !== null) return { reason: 'secret', detail: `named like ${secret}; never read` };
      const lock = lockFileOf(baseName);
      if (lock !== null) return { reason: 'ignored', detail: lock };
      const ignored = ignoredBy(path, baseName);
      if (ignored !== null) return { reason: 'ignored', detail: ignored };
      const excluded = excludes.length === 0 ? null : excludedBy(path);
      if (excluded !== null) return { reason: 'ignored', detail: `matches exclude: ${excluded}` };
      if (!isSupportedExtension(ext) && !converted.has(ext)) return { reason: 'unsupported', detail: unsupportedDetail(ext) };
      // The path is the file's name on the service, sent in a multipart header: no line break, no tab.
      // A walk's path is its folder's path joined to the name (a cons string): testing it whole made V8
      // flatten (copy) every path; the folder is tested once instead.
      if (hasControlCharacter(folderChecked ? baseName : path)) return { reason: 'unsupported', detail: CONTROL_DETAIL };
      return 'candidate';
    },
  };
}

const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** True when `text` holds a control character (a line break, a tab...), which no path on the service may. */
export function hasControlCharacter(text: string): boolean {
  return CONTROL_CHARACTER.test(text);
}
const CONTROL_DETAIL = 'its path holds a control character (a line break, a tab...), which a file name on the service cannot: rename it';

const LEGACY_SLIDES = new Set(['ppt', 'pps', 'pot']);

/** One detail string per extension, shared by its files (a docs tree often holds 20k images). */
const unsupportedDetails = new Map<string, string>();

function unsupportedDetail(ext: string): string {
  let detail = unsupportedDetails.get(ext);
  if (detail === undefined) {
    detail =
      ext === ''
        ? 'no file extension: not a supported type'
        : convertTypeOfExtension(ext) !== null
          ? `.${ext} files are converted to Markdown only when convert: in kbsync.yaml lists ${ext}`
          : LEGACY_SLIDES.has(ext)
            ? `.${ext} files (PowerPoint 97-2003) cannot be converted: save them as PPTX (File > Save As) to sync them`
            : `.${ext} files are not a supported type`;
    if (unsupportedDetails.size < 1024) unsupportedDetails.set(ext, detail);
  }
  return detail;
}
