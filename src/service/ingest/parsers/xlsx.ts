import { MIB } from '../../../shared/plans.js';
import { DEFAULT_ZIP_LIMITS, readOfficeZip, storedZip, type ZipLimits } from '../office-zip.js';
import type { Parser, Section } from '../types.js';
import { workbookSectionsInThread } from './office-thread.js';

/**
 * SheetJS holds a whole workbook in memory, several times the size of its sheets' XML, so the XML
 * it is handed is limited.
 */
export const XLSX_ZIP_LIMITS: ZipLimits = { ...DEFAULT_ZIP_LIMITS, maxPartBytes: 32 * MIB, maxTotalBytes: 64 * MIB };

/** The parts SheetJS needs: XML and relationships, never media, printer settings or embedded files. */
const isTextPart = (name: string): boolean => /\.(xml|rels)$/i.test(name);

async function* parseXlsx(path: string, limits: ZipLimits): AsyncGenerator<Section> {
  const parts = await readOfficeZip(path, 'XLSX', isTextPart, limits);
  const zip = await storedZip(parts);
  parts.clear();
  yield* workbookSectionsInThread(zip, 'xlsx');
}

/**
 * XLSX (SheetJS, the `@e965/xlsx` build): every sheet, hidden ones too, each row a
 * `column: value; ...` record under the sheet's name. The ZIP is checked before SheetJS sees it
 * (office-zip.ts); an encrypted workbook is refused as such. SheetJS runs in a worker thread (office-thread.ts).
 */
export const xlsxParser: Parser = {
  extensions: ['xlsx'],
  parse: (path) => parseXlsx(path, XLSX_ZIP_LIMITS),
};

/** An XLSX parser with other ZIP limits (tests). */
export function xlsxParserWith(limits: ZipLimits): Parser {
  return { extensions: ['xlsx'], parse: (path) => parseXlsx(path, limits) };
}
