/**
 * A PDF's outline (its bookmarks: LibreOffice, Word and LaTeX's hyperref write one from the
 * headings) as a set of heading titles, to confirm the headings the layout finds: where the outline
 * names most of them, a larger line it does not name (an author, a date under the title) is text.
 */

type OutlineNode = { title: string; items: OutlineNode[] };

/** Most outline entries read (a hostile outline can be long). */
const MAX_ENTRIES = 10_000;
/** Deepest outline level read. */
const MAX_DEPTH = 32;

const NUMBERING = /^(\d+(\.\d+)*|[ivxlcdm]+|[a-z])[.):]?\s+/i;

/** A title as compared: letters and digits only, lowercase, a leading section number dropped. */
export function titleKey(text: string): string {
  return text
    .normalize('NFKC')
    .trim()
    .replace(NUMBERING, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '');
}

/** The keys of every title in the outline (empty when the PDF has none). */
export function outlineTitles(outline: readonly OutlineNode[] | null): Set<string> {
  const out = new Set<string>();
  let seen = 0;
  const walk = (nodes: readonly OutlineNode[], depth: number): void => {
    for (const n of nodes) {
      if (++seen > MAX_ENTRIES || depth > MAX_DEPTH) return;
      const key = titleKey(typeof n.title === 'string' ? n.title : '');
      if (key !== '') out.add(key);
      if (Array.isArray(n.items)) walk(n.items, depth + 1);
    }
  };
  walk(outline ?? [], 0);
  return out;
}
