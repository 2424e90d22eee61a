import type { RecordSection } from '../types.js';

/** Records are handed to the chunker in sections of about this many characters. */
export const RECORD_SECTION_CHARS = 64 * 1024;

/**
 * Collects records into sections of about RECORD_SECTION_CHARS, the later ones marked `continues`.
 * A record added with its row number keeps it (the section's `rows`); one without has none.
 */
export function createRecordBatcher(): { add(record: string, row?: number): RecordSection | undefined; end(): RecordSection | undefined } {
  let records: string[] = [];
  let rows: number[] | undefined;
  let chars = 0;
  let started = false;
  const take = (): RecordSection | undefined => {
    if (records.length === 0) return undefined;
    const section: RecordSection = started ? { records, continues: true } : { records };
    if (rows !== undefined) section.rows = rows;
    started = true;
    records = [];
    rows = undefined;
    chars = 0;
    return section;
  };
  return {
    add(record, row) {
      if (row !== undefined) {
        rows ??= [];
        rows[records.length] = row;
      }
      records.push(record);
      chars += record.length;
      return chars >= RECORD_SECTION_CHARS ? take() : undefined;
    },
    end: take,
  };
}
