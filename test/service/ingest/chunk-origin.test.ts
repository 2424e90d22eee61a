import * as XLSX from '@e965/xlsx';
import Database from 'better-sqlite3';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/shared/logger.js';
import { migrateChunks } from '../../../src/service/store/chunks.js';
import { chunkDocumentWithOrigin } from '../../../src/service/ingest/chunker.js';
import { jsonlParser } from '../../../src/service/ingest/parsers/jsonl.js';
import { parquetParser } from '../../../src/service/ingest/parsers/parquet.js';
import { xlsxParser } from '../../../src/service/ingest/parsers/xlsx.js';
import { addFile, createTestDb, parseContent, recordsOf, type TestDb } from './test-support.js';
import type { Section } from '../../../src/service/ingest/types.js';
import { createProcessingWorker, type ProcessingWorker } from '../../../src/service/ingest/worker.js';

describe('chunk origin (chunker)', () => {
  it("each chunk carries its section's heading path; records carry the range of rows they hold", () => {
    const rows = Array.from({ length: 60 }, (_, i) => i + 2);
    const chunks = chunkDocumentWithOrigin(
      {
        sections: [
          { heading: 'Guide > Install', text: 'Run the installer.' },
          { heading: 'Sheet1', records: rows.map((r) => `name: item ${r}; price: ${r * 3}`), rows },
          { text: 'no heading here' },
        ],
      },
      { maxChars: 200, overlapChars: 0 },
    );

    expect(chunks[0]).toEqual({ text: 'Guide > Install\nRun the installer.', heading: 'Guide > Install', firstRow: null, lastRow: null });
    expect(chunks.at(-1)).toEqual({ text: 'no heading here', heading: null, firstRow: null, lastRow: null });
    const sheet = chunks.slice(1, -1);
    expect(sheet.length).toBeGreaterThan(3);
    let next = 2;
    for (const chunk of sheet) {
      const lines = chunk.text.split('\n');
      expect(lines[0]).toBe('Sheet1');
      expect(chunk).toMatchObject({ heading: 'Sheet1', firstRow: next, lastRow: next + lines.length - 2 });
      expect(lines.slice(1)).toEqual(rows.slice(next - 2, next - 2 + lines.length - 1).map((r) => `name: item ${r}; price: ${r * 3}`));
      next = (chunk.lastRow as number) + 1;
    }
    expect(next).toBe(62);
  });
});

describe('chunk origin (stored by the worker)', () => {
  let t: TestDb;
  let worker: ProcessingWorker | undefined;
  beforeEach(() => {
    t = createTestDb();
  });
  afterEach(async () => {
    await worker?.stop();
    t.cleanup();
  });
  const process = async (): Promise<void> => {
    worker = createProcessingWorker({ db: t.db, logger: silentLogger(), onIntelligenceEvent: () => {} });
    worker.start();
    worker.kick();
    await worker.whenIdle();
  };
  const origins = (id: number): unknown[] =>
    t.db.prepare('SELECT chunk_index, heading, first_row, last_row FROM chunks WHERE source_id = ? ORDER BY chunk_index').raw(true).all(id);

  it('a Markdown file: each chunk with its heading path; a CSV file: each chunk with the data rows it holds', async () => {
    const md = addFile(t, { name: 'guide.md', content: '# Guide\n\nIntro.\n\n## Install\n\nRun it.\n' });
    const csvRows = Array.from({ length: 300 }, (_, i) => `${i + 1},widget number ${i + 1},${(i * 17) % 1000}`);
    const csv = addFile(t, { name: 'parts.csv', content: `id,name,stock\n${csvRows.join('\n')}\n` });

    await process();

    expect(origins(md)).toEqual([
      [0, 'Guide', null, null],
      [1, 'Guide > Install', null, null],
    ]);
    const ranges = origins(csv) as [number, string | null, number, number][];
    expect(ranges.length).toBeGreaterThan(1);
    expect(ranges[0]?.[2]).toBe(1);
    expect(ranges.at(-1)?.[3]).toBe(300);
    for (let i = 1; i < ranges.length; i++) expect((ranges[i] as number[])[2]).toBe(((ranges[i - 1] as number[])[3] as number) + 1);
    // Every chunk's rows hold their column names.
    const texts = t.db.prepare('SELECT text FROM chunks WHERE source_id = ?').pluck().all(csv) as string[];
    for (const text of texts) for (const line of text.split('\n')) expect(line).toMatch(/^id: \d+; name: widget number \d+; stock: \d+$/);
  });

  it('adds the origin columns to a chunks table made before them, keeping its rows', () => {
    const db = new Database(':memory:');
    db.exec(
      'CREATE TABLE chunks (id INTEGER PRIMARY KEY, dataset_id INTEGER NOT NULL, source_id INTEGER NOT NULL, chunk_index INTEGER NOT NULL, text TEXT NOT NULL, generation INTEGER NOT NULL)',
    );
    db.prepare('INSERT INTO chunks (dataset_id, source_id, chunk_index, text, generation) VALUES (1, 1, 0, ?, 1)').run('old text');

    migrateChunks(db);
    migrateChunks(db);

    expect(db.prepare('SELECT text, heading, first_row, last_row FROM chunks').all()).toEqual([
      { text: 'old text', heading: null, first_row: null, last_row: null },
    ]);
    db.close();
  });
});

describe('row numbers from the record parsers', () => {
  const rowsOf = (sections: Section[]): (number | undefined)[] =>
    sections.flatMap((s) => ('records' in s ? s.records.map((_, i) => s.rows?.[i]) : []));

  it('a sheet: its own row numbers (the header row and a blank row not counted as records)', async () => {
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['Name', 'City'], ['Åsa', 'Zürich'], [], ['Ola', 'Oslo']]), 'Staff');
    const sections = await parseContent(xlsxParser, 'book.xlsx', XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);

    expect(recordsOf(sections)).toEqual(['columns: Name, City', 'Name: Åsa; City: Zürich', 'Name: Ola; City: Oslo']);
    expect(rowsOf(sections)).toEqual([undefined, 2, 4]);
  });

  it('Parquet: 1-based row numbers across row groups; JSONL: line numbers', async () => {
    const data = Buffer.from(
      parquetWriteBuffer({ columnData: [{ name: 'n', data: [10, 20, 30, 40, 50], type: 'INT32' }], rowGroupSize: 2 }),
    );
    expect(rowsOf(await parseContent(parquetParser, 't.parquet', data))).toEqual([1, 2, 3, 4, 5]);
    expect(rowsOf(await parseContent(jsonlParser, 't.jsonl', '{"a":1}\n\n{"a":2}\n'))).toEqual([1, 3]);
  });
});
