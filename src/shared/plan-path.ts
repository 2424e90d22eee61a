/** The path as `kbsync plan` prints it: `source/path` with several sources, else `path`. */
export function planPath(source: string, path: string, multiSource: boolean): string {
  return multiSource ? `${source}/${path}` : path;
}
