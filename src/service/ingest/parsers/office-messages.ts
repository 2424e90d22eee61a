/** The user-facing texts of office-document failures, shared by the parsers and their worker thread (office-worker.ts). */

/** Why mammoth could not convert a DOCX. */
export function describeMammothError(message: string): string {
  if (/could not find main document part/i.test(message)) {
    return 'not a valid DOCX file: the archive has no main document part (word/document.xml); is it a Word document?';
  }
  return `could not read the DOCX document (${libraryText(message)}); open it in Word or LibreOffice, save it again and upload that copy`;
}

/** A library's message without its tags and empty locations (`[xmldom error]`, `@#[line:undefined,...]`), on one line. */
function libraryText(message: string): string {
  return message
    .replace(/^error:\s*/i, '')
    .replace(/\[xmldom [a-z]+\]/gi, '')
    .replace(/@#\[line:[^\]]*\]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The workbook formats SheetJS reads here. */
export type WorkbookFormat = 'xlsx' | 'xls';

/** Why SheetJS could not read a workbook of `format`. */
export function describeWorkbookError(format: WorkbookFormat, message: string): string {
  return format === 'xlsx'
    ? `not a valid XLSX workbook (${message}); open it in Excel or LibreOffice and save it again`
    : `the XLS workbook could not be read: the file is damaged or truncated (${message}); open it in Excel or LibreOffice and save it again`;
}
