import { delimitedParser } from './delimited.js';

/** CSV (RFC 4180 quoting, streamed): a header row, then one `col: value; col: value` record per row. */
export const csvParser = delimitedParser(['csv'], ',', 'CSV');
