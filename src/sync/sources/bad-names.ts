import { readdirSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { escapedName, shellQuotedName } from '../../shared/byte-names.js';

/**
 * Names that are not valid UTF-8. readdir reads each bad byte as U+FFFD, a name nothing can open: such
 * a file would be left out without a word. They are not uploaded under an escaped name:
 * the service keeps names as UTF-8 text, and a remote `caf%E9.md` is neither the file's name nor
 * one a reader would look for; instead each gets a `bad-name` skip entry, its path written with each
 * bad byte as `\xHH` (escapedName), saying how to rename it.
 */

/** A folder's names that are not valid UTF-8, by the string readdir gives for them; null when its bytes cannot be listed. */
export type BadNames = Map<string, Buffer[]> | null;

/** Lists `absDir` again as bytes (only for a folder where readdir gave a U+FFFD), keeping the names that are not UTF-8. */
export function badNamesIn(absDir: string): BadNames {
  let raw: Buffer[];
  try {
    raw = readdirSync(absDir, { encoding: 'buffer' });
  } catch {
    return null;
  }
  const bad = new Map<string, Buffer[]>();
  for (const b of raw) {
    if (isUtf8(b)) continue;
    const lossy = b.toString('utf8');
    const same = bad.get(lossy);
    if (same === undefined) bad.set(lossy, [b]);
    else same.push(b);
  }
  return bad;
}

/** The detail of a `bad-name` skip entry: why, and the command that renames it. */
export function badNameDetail(raw: Buffer, folder: boolean): string {
  const why = folder
    ? 'its name is not valid UTF-8, so its files are not looked at'
    : "its name is not valid UTF-8, and a file's name on the service is UTF-8 text";
  return `${why}; rename it, e.g. in its folder: mv ${shellQuotedName(raw)} NEW-NAME (convmv -f latin1 -t utf-8 renames many at once)`;
}

/** The path of a `bad-name` skip entry: the folder's, then the name with each bad byte as `\xHH`. */
export function badNamePath(pathPrefix: string, raw: Buffer): string {
  return pathPrefix + escapedName(raw);
}
