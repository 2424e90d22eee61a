import type { Parser } from '../types.js';
import { lineFileSections } from './line-based.js';

/** Plain text: paragraphs (blank-line separated), streamed. */
export const txtParser: Parser = {
  extensions: ['txt'],
  parse: (path) => lineFileSections(path, { markdown: false }),
};
