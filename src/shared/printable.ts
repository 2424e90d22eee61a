/**
 * Characters a terminal must not be handed raw: C0 controls (newline, tab, escape...), DEL, C1
 * controls, the Unicode line and paragraph separators, and the bidirectional overrides and isolates
 * (which reorder what is shown after them).
 */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const ESCAPED = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069"\\]/g;

const SHORT: Readonly<Record<string, string>> = { '\n': '\\n', '\t': '\\t', '\r': '\\r', '"': '\\"', '\\': '\\\\' };

/**
 * Text (a path, a name, a reason holding one) as it is shown to a person: unchanged when it holds no
 * character of UNPRINTABLE; else quoted, as git quotes such a path, with C escapes inside (`\n`, `\t`,
 * `\r`, `\xHH` below U+0100, `\u{HHHH}` above, and `\"`, `\\`), so that the shown text is one line
 * and says which bytes the name holds. Printable text comes back as it is: applying it twice is once.
 */
export function printable(text: string): string {
  if (!UNPRINTABLE.test(text)) return text;
  const inner = text.replace(ESCAPED, (c) => {
    const short = SHORT[c];
    if (short !== undefined) return short;
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
  return `"${inner}"`;
}

/** `text` in double quotes for a message: printable() when it must be escaped (which quotes it), else as it is. */
export function quoted(text: string): string {
  const shown = printable(text);
  return shown === text ? `"${text}"` : shown;
}

// The part of UNPRINTABLE that JSON.stringify leaves as it is.
const RAW_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A line of the pretty log (pino-pretty's: fields as JSON, whose strings have their C0 controls
 * escaped already; colours are escape sequences, kept) with the rest of UNPRINTABLE escaped.
 */
export function printableLogLine(line: string): string {
  return line.replace(RAW_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
