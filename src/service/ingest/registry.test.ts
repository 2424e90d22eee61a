import { describe, expect, it } from 'vitest';
import { SUPPORTED_EXTENSIONS } from '../../shared/file-types.js';
import { PARSERS, parserFor } from './registry.js';

describe('parserFor', () => {
  it.each([
    ['notes.txt', 'txt'],
    ['README.MD', 'md'],
    ['data.Csv', 'csv'],
    ['dir/table.tsv', 'tsv'],
    ['a.b.json', 'json'],
    ['events.jsonl', 'jsonl'],
    ['report.DOCX', 'docx'],
    ['page.html', 'html'],
    ['feed.xml', 'xml'],
    ['sheet.xlsx', 'xlsx'],
    ['old.xls', 'xls'],
    ['table.parquet', 'parquet'],
  ])('%s → the %s parser', (name, ext) => {
    expect(parserFor(name)?.extensions).toContain(ext);
  });

  it.each(['Makefile', '.json', 'archive.tar.gz', 'page.htm', 'book.xlsb'])('%s has no parser', (name) => {
    expect(parserFor(name)).toBeUndefined();
  });

  it('has a parser for every supported type', () => {
    for (const ext of SUPPORTED_EXTENSIONS) expect(parserFor(`file.${ext}`)?.extensions).toContain(ext);
  });

  it('claims each extension once, and only supported ones', () => {
    const all = PARSERS.flatMap((p) => p.extensions);

    expect(new Set(all).size).toBe(all.length);
    for (const ext of all) expect(SUPPORTED_EXTENSIONS).toContain(ext);
  });
});
