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
  ])('%s → the %s parser', (name, ext) => {
    expect(parserFor(name)?.extensions).toContain(ext);
  });

  it.each(['report.docx', 'page.html', 'sheet.xlsx', 'Makefile', '.json', 'archive.tar.gz'])('%s has no parser yet', (name) => {
    expect(parserFor(name)).toBeUndefined();
  });

  it('claims each extension once, and only supported ones', () => {
    const all = PARSERS.flatMap((p) => p.extensions);

    expect(new Set(all).size).toBe(all.length);
    for (const ext of all) expect(SUPPORTED_EXTENSIONS).toContain(ext);
  });
});
