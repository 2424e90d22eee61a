import { delimitedParser } from './delimited.js';

/** TSV (tab-separated, quotes allowed as in CSV, streamed): a header row, then one record per row. */
export const tsvParser = delimitedParser(['tsv'], '\t', 'TSV');
