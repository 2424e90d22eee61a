/**
 * File names that are not valid UTF-8 (a Latin-1 system's `caf\xE9.md`): Node reads each bad byte as
 * U+FFFD, a name no call can open again. These write such a name losslessly and readably: its valid
 * characters as they are, each byte of an invalid sequence (and a backslash, so that none is ambiguous) as `\xHH`.
 */

/** The length of the valid UTF-8 sequence at `at` (1 to 4), or 0 when the bytes there are not one. */
function sequenceAt(bytes: Uint8Array, at: number): number {
  const b = bytes[at] as number;
  if (b < 0x80) return 1;
  const cont = (i: number, lo = 0x80, hi = 0xbf): boolean => {
    const c = bytes[at + i];
    return c !== undefined && c >= lo && c <= hi;
  };
  if (b >= 0xc2 && b <= 0xdf) return cont(1) ? 2 : 0;
  // The second byte's range rules out overlong forms and UTF-16 surrogates.
  if (b >= 0xe0 && b <= 0xef) {
    const second = b === 0xe0 ? cont(1, 0xa0) : b === 0xed ? cont(1, 0x80, 0x9f) : cont(1);
    return second && cont(2) ? 3 : 0;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    const second = b === 0xf0 ? cont(1, 0x90) : b === 0xf4 ? cont(1, 0x80, 0x8f) : cont(1);
    return second && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

const BACKSLASH = 0x5c;

/** `bytes` as text, each byte outside a valid UTF-8 sequence, and each backslash, written `\xHH` (upper-case hex). */
export function escapedName(bytes: Uint8Array): string {
  let out = '';
  let run = 0;
  for (let at = 0; at < bytes.length;) {
    const n = bytes[at] === BACKSLASH ? 0 : sequenceAt(bytes, at);
    if (n > 0) {
      at += n;
      run += n;
      continue;
    }
    out += Buffer.from(bytes.subarray(at - run, at)).toString('utf8') + `\\x${hex(bytes[at] as number)}`;
    run = 0;
    at++;
  }
  return out + Buffer.from(bytes.subarray(bytes.length - run)).toString('utf8');
}

/** The name as bash and zsh read `$'...'`: a command a user can paste (`mv $'caf\xE9.md' NEW-NAME`). */
export function shellQuotedName(bytes: Uint8Array): string {
  return `$'${escapedName(bytes).replace(/'/g, "\\'")}'`;
}

/** The string Node makes of the name escapedName wrote (U+FFFD for the bad bytes): what readdir or argv give for it. */
export function lossyName(escaped: string): string {
  if (!escaped.includes('\\x')) return escaped;
  const parts: Buffer[] = [];
  let last = 0;
  for (const m of escaped.matchAll(/\\x([0-9A-F]{2})/g)) {
    parts.push(Buffer.from(escaped.slice(last, m.index), 'utf8'), Buffer.from([parseInt(m[1] as string, 16)]));
    last = m.index + m[0].length;
  }
  parts.push(Buffer.from(escaped.slice(last), 'utf8'));
  return Buffer.concat(parts).toString('utf8');
}

function hex(b: number): string {
  return b.toString(16).toUpperCase().padStart(2, '0');
}
