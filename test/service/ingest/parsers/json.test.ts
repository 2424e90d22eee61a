import { describe, expect, it } from 'vitest';
import { parseContent, parseFailure, recordsOf } from '../test-support.js';
import { jsonParser } from '../../../../src/service/ingest/parsers/json.js';
import { jsonlParser } from '../../../../src/service/ingest/parsers/jsonl.js';

describe('json parser', () => {
  it('flattens an object to path: value lines, one record per top-level key', async () => {
    const json = JSON.stringify({ a: { b: [{ c: 1 }, { c: null }], d: true }, e: 'x', f: [], g: {} });

    const records = recordsOf(await parseContent(jsonParser, 'a.json', json));

    expect(records).toEqual(['a.b[0].c: 1\na.b[1].c: null\na.d: true', 'e: x', 'f: []', 'g: {}']);
  });

  it('makes each element of a top-level array one record', async () => {
    const json = '\uFEFF[{"name":"Ada","address":{"city":"London"}},{"name":"Linus","tags":["a","b"]}]';

    const records = recordsOf(await parseContent(jsonParser, 'a.json', json));

    expect(records).toEqual(['name: Ada\naddress.city: London', 'name: Linus\ntags[0]: a\ntags[1]: b']);
  });

  it('makes each element of a nested array of objects one record, with its full path', async () => {
    const json = '{"items":[{"id":1},{"id":2}],"total":2}';

    expect(recordsOf(await parseContent(jsonParser, 'a.json', json))).toEqual(['items[0].id: 1', 'items[1].id: 2', 'total: 2']);
  });

  it('writes a bare scalar as one line', async () => {
    expect(recordsOf(await parseContent(jsonParser, 'a.json', '"just text"'))).toEqual(['just text']);
  });

  it('yields nothing for an empty file', async () => {
    expect(await parseContent(jsonParser, 'a.json', '  \n')).toEqual([]);
  });

  it.each([
    ['a trailing comma', '{\n  "a": 1,\n}', 'invalid JSON: line 3, column 1: '],
    ['a truncated word', '{\n  "a":\n   tru}', 'invalid JSON: line 3, column 4: '],
    ['a missing comma (CRLF)', '{"a": 1,\r\n "b": 2\r\n "c": 3}', 'invalid JSON: line 3, column 2: '],
    ['an unterminated document', '[1,\n2', 'invalid JSON: line 2: unexpected end of JSON; fix it and upload the file again'],
  ])('fails %s naming the line and column', async (_label, json, prefix) => {
    expect(await parseFailure(parseContent(jsonParser, 'bad.json', json))).toMatch(new RegExp(`^${prefix.replace(/[[\]()]/g, '\\$&')}`));
  });

  it('fails a file over the whole-document limit with a clear error, without reading it', async () => {
    const json = JSON.stringify({ text: 'x'.repeat(4096) });

    const message = await parseFailure(parseContent(jsonParser, 'big.json', json, { maxWholeFileBytes: 1024 }));

    expect(message).toMatch(/^JSON file is 0\.0 MiB, over the 0 MiB limit for a whole JSON document; split it or use JSONL/);
  });

  it('writes a subtree nested deeper than the flatten limit as compact JSON', async () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100; i++) deep = { k: deep };

    const [record] = recordsOf(await parseContent(jsonParser, 'deep.json', JSON.stringify(deep)));

    expect(record).toContain('"bottom"');
    expect(record?.startsWith(`${Array(65).fill('k').join('.')}: {"k":`)).toBe(true);
  });
});

describe('jsonl parser', () => {
  it('makes each line one record, skipping blank lines, reading a BOM and CRLF', async () => {
    const jsonl = '\uFEFF{"id":1,"tags":["x"]}\r\n\r\n{"id":2}\r\n[3,4]\r\n"five"';

    expect(recordsOf(await parseContent(jsonlParser, 'a.jsonl', jsonl))).toEqual(['id: 1\ntags[0]: x', 'id: 2', '[0]: 3\n[1]: 4', 'five']);
  });

  it('fails on a bad line, naming that line and the column', async () => {
    const jsonl = '{"id":1}\n{"id":2}\n\n{"id": 3,}\n{"id":5}\n';

    expect(await parseFailure(parseContent(jsonlParser, 'a.jsonl', jsonl))).toMatch(/^line 4: invalid JSON: column 10: /);
  });

  it('names the right line when it is far into a file read in several pieces', async () => {
    const good = Array.from({ length: 30_000 }, (_, i) => JSON.stringify({ id: i, note: 'padding text for the line' }));
    const jsonl = `${good.join('\n')}\n\n{"id": oops}\n`;

    expect(await parseFailure(parseContent(jsonlParser, 'a.jsonl', jsonl))).toMatch(/^line 30002: invalid JSON: column 8: /);
  });

  it('fails a truncated last line', async () => {
    expect(await parseFailure(parseContent(jsonlParser, 'a.jsonl', '{"id":1}\n{"id":'))).toBe(
      'line 2: invalid JSON: unexpected end of JSON; fix the line and upload the file again',
    );
  });

  it('yields nothing for an empty file', async () => {
    expect(await parseContent(jsonlParser, 'a.jsonl', '')).toEqual([]);
  });
});
