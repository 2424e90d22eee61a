import { MIB } from '../../../shared/plans.js';

/** Lines removed from the start of the text: line 1 of what is handed on is line `dropped + 1` of the file. */
export type DroppedLines = { dropped: number };

/** Leading text held back while looking for the first data line; past this the rest is handed on as it is. */
const MAX_HEAD_CHARS = 4 * MIB;
const EOL = /\r\n|\r|\n/;

/** A `#` line is a comment, unless `#` is a whole field before a delimiter (a column named "#" in a header). */
const isComment = (line: string, delimiter: string): boolean =>
  line.startsWith('#') && !(line.includes(delimiter) && line.split(delimiter, 1)[0]?.trim() === '#');

/**
 * Delimited text without its leading comment lines (`#` at the start of the line) and the blank
 * lines among them, as tables such as zone1970.tab write them. With `commentedHeader` (TSV), the
 * last of them becomes the header when it holds the delimiter (`#codes<TAB>coordinates<TAB>TZ`).
 * `#` lines after the first data line are data. `lines.dropped` says how many lines went.
 */
export async function* withoutLeadingComments(
  pieces: AsyncIterable<string>,
  delimiter: string,
  commentedHeader: boolean,
  lines: DroppedLines,
): AsyncGenerator<string> {
  let head = '';
  let lastComment: string | undefined;
  let inData = false;
  const header = (): string => {
    if (!commentedHeader || lastComment === undefined || !lastComment.includes(delimiter)) return '';
    lines.dropped--;
    return `${lastComment.slice(1).trimStart()}\n`;
  };
  /** Drops the comment and blank lines at the start of `head`; true once a data line is there. */
  const dropComments = (atEnd: boolean): boolean => {
    for (;;) {
      const eol = EOL.exec(head);
      // A CR at the end may be half of a CRLF: wait for the next piece.
      if (eol === null || (!atEnd && eol[0] === '\r' && eol.index === head.length - 1)) {
        if (atEnd && head !== '' && isComment(head, delimiter)) {
          lastComment = head;
          head = '';
          lines.dropped++;
        }
        return head.length > MAX_HEAD_CHARS || (atEnd && head.trim() !== '');
      }
      const line = head.slice(0, eol.index);
      if (line.trim() !== '' && !isComment(line, delimiter)) return true;
      if (line.trim() !== '') lastComment = line;
      head = head.slice(eol.index + eol[0].length);
      lines.dropped++;
    }
  };
  for await (const piece of pieces) {
    if (inData) {
      yield piece;
      continue;
    }
    head += piece;
    if (dropComments(false)) {
      inData = true;
      yield header() + head;
      head = '';
    }
  }
  if (!inData && dropComments(true)) yield header() + head;
}
