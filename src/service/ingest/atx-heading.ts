export type AtxHeading = { level: number; text: string };

const isSpaceOrTab = (code: number): boolean => code === 0x20 || code === 0x09;

/**
 * A Markdown ATX heading line (`## Title ##`): up to three spaces, one to six `#`, then nothing or a
 * space or tab, the text, and an optional closing run of `#` after a space or tab. The text is trimmed.
 *
 * The same answers as `/^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/` with its capture
 * trimmed, but in one pass: that pattern backtracks quadratically on a heading line holding a long
 * run of spaces (`# a` + 80,000 spaces + `x` took seconds).
 */
export function atxHeading(line: string): AtxHeading | undefined {
  let i = 0;
  while (i < 3 && line.charCodeAt(i) === 0x20) i++;
  const hashes = i;
  while (i < line.length && line.charCodeAt(i) === 0x23) i++;
  const level = i - hashes;
  if (level < 1 || level > 6) return undefined;
  if (i === line.length) return { level, text: '' };
  if (!isSpaceOrTab(line.charCodeAt(i))) return undefined;
  // `.` in the pattern matches no line terminator: such a character anywhere means no heading.
  if (line.includes('\u2028', i) || line.includes('\u2029', i)) return undefined;
  let end = line.length;
  while (end > i && isSpaceOrTab(line.charCodeAt(end - 1))) end--;
  // A closing run of `#` counts only after a space or tab, and only when text comes before it.
  let closing = end;
  while (closing > i && line.charCodeAt(closing - 1) === 0x23) closing--;
  if (closing < end && closing > i && isSpaceOrTab(line.charCodeAt(closing - 1))) {
    let textEnd = closing;
    while (textEnd > i && isSpaceOrTab(line.charCodeAt(textEnd - 1))) textEnd--;
    // All of it spaces and hashes after the first gap: the regex gives the hashes as the text.
    if (textEnd === i) return { level, text: line.slice(i, end).trim() };
    end = textEnd;
  }
  return { level, text: line.slice(i, end).trim() };
}
