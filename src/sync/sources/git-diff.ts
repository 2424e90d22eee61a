/** What changed between two commits, paths relative to the source root (the subdir, if any). */
export type GitChanges = {
  added: string[];
  modified: string[];
  deleted: string[];
  renamed: { from: string; to: string }[];
};

/**
 * Parses `git diff --name-status -M -z` output. Paths outside `subdir` are dropped; a rename that
 * crosses the subdir's edge becomes an addition (moved in) or a deletion (moved out).
 */
export function parseNameStatus(output: string, subdir: string): GitChanges {
  const changes: GitChanges = { added: [], modified: [], deleted: [], renamed: [] };
  const prefix = subdir === '' ? '' : `${subdir}/`;
  const inside = (p: string): string | null => (p.startsWith(prefix) ? p.slice(prefix.length) : null);
  const fields = output.split('\0');
  let i = 0;
  while (i < fields.length) {
    const status = fields[i++] ?? '';
    if (status === '') continue;
    const letter = status[0];
    if (letter === 'R' || letter === 'C') {
      const from = inside(fields[i++] ?? '');
      const to = inside(fields[i++] ?? '');
      if (letter === 'R' && from !== null && to !== null) changes.renamed.push({ from, to });
      else if (letter === 'R' && from !== null) changes.deleted.push(from);
      else if (to !== null) changes.added.push(to);
      continue;
    }
    const path = inside(fields[i++] ?? '');
    if (path === null) continue;
    if (letter === 'A') changes.added.push(path);
    else if (letter === 'D') changes.deleted.push(path);
    else changes.modified.push(path); // M, T (type change), U (unmerged), X: treat as content changes
  }
  return changes;
}
