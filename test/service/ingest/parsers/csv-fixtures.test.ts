import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../../../src/service/ingest/chunker.js';
import { recordsOf } from '../test-support.js';
import type { Section } from '../../../../src/service/ingest/types.js';
import { csvParser } from '../../../../src/service/ingest/parsers/csv.js';

// The csv-spectrum files of test/fixtures/real/csv and the values its README says must come out.
const FIXTURES = fileURLToPath(new URL('../../../fixtures/real/csv/', import.meta.url));

async function parseFixture(name: string): Promise<Section[]> {
  const out: Section[] = [];
  for await (const s of csvParser.parse(FIXTURES + name)) out.push(s);
  return out;
}

describe('csv-spectrum fixtures', () => {
  it.each([
    ['comma_in_quotes.csv', ['first: John; last: Doe; address: 120 any st.; city: Anytown, WW; zip: 08123'], ['Anytown, WW', '08123']],
    ['escaped_quotes.csv', ['a: 1; b: ha "ha" ha', 'a: 3; b: 4'], ['ha "ha" ha']],
    ['quotes_and_newlines.csv', ['a: 1; b: ha \n"ha" \nha', 'a: 3; b: 4'], ['ha \n"ha" \nha']],
    ['json.csv', ['key: 1; val: {"type": "Point", "coordinates": [102.0, 0.5]}'], ['{"type": "Point", "coordinates": [102.0, 0.5]}']],
    ['utf8.csv', ['a: 1; b: 2; c: 3', 'a: 4; b: 5; c: ʤ'], ['ʤ']],
  ])('%s parses to the expected rows', async (name, records, mustExtract) => {
    expect(readFileSync(FIXTURES + name).length).toBeGreaterThan(0);

    const sections = await parseFixture(name);
    const chunks = chunkDocument({ sections });

    expect(recordsOf(sections)).toEqual(records);
    for (const value of mustExtract) expect(chunks.some((c) => c.includes(value))).toBe(true);
  });
});
