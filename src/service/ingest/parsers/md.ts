import type { Parser } from '../types.js';
import { lineFileSections } from './line-based.js';

/**
 * Markdown, streamed: each ATX or setext heading starts a section whose chunks begin with the heading
 * path ("Guide > Install"); fenced code is kept as text; YAML front matter is not body text but one
 * `key: value` record (so `title:` and `tags:` are searchable); front matter that is not valid YAML
 * is kept as ordinary text.
 */
export const mdParser: Parser = {
  extensions: ['md'],
  parse: (path) => lineFileSections(path, { markdown: true, frontMatter: true }),
};
