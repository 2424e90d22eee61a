import type { TrackedFile } from '../types.js';

/** Rows per page of passTrackedFiles: a page's objects die young, and a state of any size is read in constant memory. */
const PASS_PAGE = 2048;

/** What a paged pass reads of a store's tracked files. */
export type TrackedPages = {
  /** The sources with tracked rows, in the order the store's loadTrackedFiles gives them. */
  trackedSourceNames(): string[];
  /** Up to `limit` rows of a source after a path (from its first when null), in path order. */
  trackedPage(source: string, after: string | null, limit: number): TrackedFile[];
};

/** Every tracked file, source by source in path order, a page at a time (PASS_PAGE). */
export function* passPages(store: TrackedPages): Generator<TrackedFile> {
  for (const source of store.trackedSourceNames()) {
    let after: string | null = null;
    for (;;) {
      const page = store.trackedPage(source, after, PASS_PAGE);
      yield* page;
      if (page.length < PASS_PAGE) break;
      after = (page[page.length - 1] as TrackedFile).path;
    }
  }
}
