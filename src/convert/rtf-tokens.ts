/** One RTF token: a group's start or end, a control word or symbol (with its parameter), text bytes, or `\binN` data. */
export type RtfToken =
  | { type: 'open' }
  | { type: 'close' }
  | { type: 'word'; word: string; param: number | undefined }
  | { type: 'symbol'; symbol: string }
  | { type: 'hex'; byte: number }
  | { type: 'text'; bytes: Uint8Array }
  | { type: 'bin'; length: number };

const BACKSLASH = 0x5c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const isLetter = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const hexValue = (c: number): number =>
  isDigit(c) ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;

/**
 * The tokens of RTF bytes, in order ([MS-RTF] 1.9.1, "RTF syntax"). Line breaks in text are not
 * text; a control word takes at most 32 letters and a parameter of at most 10 digits, and `\binN`
 * data is skipped (at most to the end of the input).
 */
export function* rtfTokens(rtf: Uint8Array): Generator<RtfToken> {
  const buf = Buffer.from(rtf.buffer, rtf.byteOffset, rtf.byteLength);
  const n = rtf.length;
  let i = 0;
  while (i < n) {
    const c = rtf[i] as number;
    if (c === OPEN) {
      yield { type: 'open' };
      i++;
    } else if (c === CLOSE) {
      yield { type: 'close' };
      i++;
    } else if (c === BACKSLASH) {
      const next = rtf[i + 1];
      if (next === undefined) return;
      if (isLetter(next)) {
        let j = i + 1;
        while (j < n && j - i <= 32 && isLetter(rtf[j] as number)) j++;
        const word = buf.toString('latin1', i + 1, j);
        let param: number | undefined;
        const negative = rtf[j] === 0x2d && isDigit(rtf[j + 1] ?? 0);
        if (negative) j++;
        const start = j;
        let value = 0;
        while (j < n && j - start < 10 && isDigit(rtf[j] as number)) value = value * 10 + ((rtf[j++] as number) - 0x30);
        if (j > start) param = negative ? -value : value;
        if (rtf[j] === 0x20) j++;
        i = j;
        if (word === 'bin' && param !== undefined && param > 0) {
          const length = Math.min(param, n - i);
          yield { type: 'bin', length };
          i += length;
        } else yield { type: 'word', word, param };
      } else if (next === 0x27) {
        const hi = hexValue(rtf[i + 2] ?? 0);
        const lo = hexValue(rtf[i + 3] ?? 0);
        if (hi >= 0 && lo >= 0) {
          yield { type: 'hex', byte: hi * 16 + lo };
          i += 4;
        } else i += 2;
      } else if (next === 0x0d || next === 0x0a) {
        yield { type: 'word', word: 'par', param: undefined };
        i += 2;
      } else {
        yield { type: 'symbol', symbol: String.fromCharCode(next) };
        i += 2;
      }
    } else if (c === 0x0d || c === 0x0a) {
      i++;
    } else {
      let j = i + 1;
      while (j < n) {
        const d = rtf[j] as number;
        if (d === OPEN || d === CLOSE || d === BACKSLASH || d === 0x0d || d === 0x0a) break;
        j++;
      }
      yield { type: 'text', bytes: rtf.subarray(i, j) };
      i = j;
    }
  }
}
