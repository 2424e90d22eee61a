import { convertTypeOf } from '../../shared/file-types.js';

/**
 * Maps a remote file name back to (source, path): the inverse of remoteNameFor. With several sources the
 * name starts with "source/"; with one source the name is the path. Null when the name is not ours.
 */
export function remoteNameMapper(sourceNames: readonly string[]): (name: string) => { source: string; path: string } | null {
  const toPath = pathMapper(sourceNames);
  return (name) => {
    // `q3.pdf.md` is the Markdown of `q3.pdf`.
    const converted = name.endsWith('.md') && convertTypeOf(name.slice(0, -3)) !== null;
    return toPath(converted ? name.slice(0, -3) : name);
  };
}

function pathMapper(sourceNames: readonly string[]): (name: string) => { source: string; path: string } | null {
  const multiSource = sourceNames.length > 1;
  const known = new Set(sourceNames);
  return (name) => {
    if (!multiSource) {
      const only = sourceNames[0];
      return only === undefined || name === '' ? null : { source: only, path: name };
    }
    const slash = name.indexOf('/');
    if (slash <= 0) return null;
    const source = name.slice(0, slash);
    const path = name.slice(slash + 1);
    if (!known.has(source) || path === '') return null;
    return { source, path };
  };
}
