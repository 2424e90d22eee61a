import { createHtmlSections } from '../html-sections.js';
import { parseFailed } from '../parse-error.js';
import { readText } from '../read-text.js';
import type { Parser, Section } from '../types.js';
import { htmlDeclaredEncoding } from './decode.js';

const HTML_ENCODING = { declared: htmlDeclaredEncoding, hint: ' (or declare its encoding with <meta charset="..."> in its head)' };

async function* parseHtml(path: string): AsyncGenerator<Section> {
  const sections = await createHtmlSections();
  let offset = 0;
  for await (const piece of readText(path, HTML_ENCODING)) {
    // readText checks the start; HTML is text throughout, so binary data further on fails the file too.
    const nul = piece.indexOf('\u0000');
    if (nul >= 0)
      throw parseFailed(`not an HTML file: NUL character at offset ${offset + nul} (binary data); upload the page saved as text`);
    offset += piece.length;
    const out: Section[] = [];
    sections.write(piece, out);
    yield* out;
  }
  const out: Section[] = [];
  sections.end(out);
  yield* out;
}

/**
 * HTML, streamed (htmlparser2): the body's text without the head, scripts, styles, navigation or
 * hidden elements; each h1-h6 starts a section headed by its heading path. A byte order mark, then
 * the charset the head declares (`<meta charset>` or `http-equiv`), then UTF-8 decide the encoding;
 * bytes invalid in it fail the file.
 */
export const htmlParser: Parser = {
  extensions: ['html'],
  parse: (path) => parseHtml(path),
};
