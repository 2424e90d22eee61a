import { readFile, stat } from 'node:fs/promises';
import { MIB } from '../../../shared/plans.js';
import { parseFailed } from '../parse-error.js';
import type { Parser, Section } from '../types.js';
import { DEFAULT_MAX_WHOLE_FILE_BYTES } from './json.js';
import { workbookSectionsInThread } from './office-thread.js';

const CFB = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
/** The BOF record a bare BIFF2, 3, 4 or 5/8 stream starts with (Excel 2 to 4 wrote no container). */
const BIFF_BOF = [
  [0x09, 0x00],
  [0x09, 0x02],
  [0x09, 0x04],
  [0x09, 0x08],
];

const startsWith = (data: Buffer, bytes: number[]): boolean => bytes.every((b, i) => data[i] === b);

/** Why a file is not an Excel 97-2003 workbook, or undefined when it starts like one. */
export function notXls(data: Buffer): string | undefined {
  if (startsWith(data, CFB) || BIFF_BOF.some((bof) => startsWith(data, bof))) return undefined;
  if (data.length === 0) return 'the file is empty';
  if (startsWith(data, [0x50, 0x4b])) return 'it is a ZIP archive (an XLSX workbook named .xls?); rename it .xlsx';
  const head = data.subarray(0, 200).toString('utf8');
  if (/^\uFEFF?\s*</.test(head))
    return 'it holds HTML or XML, which Excel also opens; save it from Excel as .xlsx, or rename it .html or .xml';
  const printable = head.replace(/[^\x20-\x7e\u00a0-\uffff]/g, '').trim();
  const quoted = printable.length > 60 ? `${printable.slice(0, 60)}...` : printable;
  return printable === ''
    ? 'it does not start like an Excel workbook'
    : `it holds text ("${quoted}"); if it is a table saved as text, rename it .csv or .txt`;
}

async function* parseXls(path: string, maxBytes: number): AsyncGenerator<Section> {
  const { size } = await stat(path);
  if (size > maxBytes) {
    throw parseFailed(
      `XLS file is ${(size / MIB).toFixed(1)} MiB, over the ${(maxBytes / MIB).toFixed(0)} MiB limit for an Excel 97-2003 workbook; save it as .xlsx or split it`,
    );
  }
  const data = await readFile(path);
  const why = notXls(data);
  if (why !== undefined) throw parseFailed(`not an Excel 97-2003 workbook (.xls): ${why}`);
  yield* workbookSectionsInThread(data, 'xls');
}

/**
 * XLS, Excel 97-2003 and older (SheetJS): BIFF2 to BIFF8, every sheet as XLSX's are. The whole file
 * is read into memory, so it is limited like a whole JSON document. A file that is not a BIFF
 * workbook (text, HTML, a renamed XLSX) is refused on purpose rather than read as a one-cell sheet.
 * SheetJS runs in a worker thread (office-thread.ts).
 */
export const xlsParser: Parser = {
  extensions: ['xls'],
  parse: (path, options) => parseXls(path, options?.maxWholeFileBytes ?? DEFAULT_MAX_WHOLE_FILE_BYTES),
};
