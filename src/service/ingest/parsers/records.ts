import type { RecordSection } from '../types.js';

/** Records are handed to the chunker in sections of about this many characters. */
export const RECORD_SECTION_CHARS = 64 * 1024;

/** Collects records into sections of about RECORD_SECTION_CHARS, the later ones marked `continues`. */
export function createRecordBatcher(): { add(record: string): RecordSection | undefined; end(): RecordSection | undefined } {
  let records: string[] = [];
  let chars = 0;
  let started = false;
  const take = (): RecordSection | undefined => {
    if (records.length === 0) return undefined;
    const section: RecordSection = started ? { records, continues: true } : { records };
    started = true;
    records = [];
    chars = 0;
    return section;
  };
  return {
    add(record) {
      records.push(record);
      chars += record.length;
      return chars >= RECORD_SECTION_CHARS ? take() : undefined;
    },
    end: take,
  };
}
