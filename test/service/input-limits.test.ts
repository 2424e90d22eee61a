import { describe, expect, it } from 'vitest';
import { apiFor, eventually, upload, useHarness, type Api } from './helpers.js';

// Hostile or unusual input through the HTTP API: a file nested past a parser's limit fails as
// parse_failed (a code the sync side never reprocesses), never as internal; a file in a legacy
// encoding it declares is read in it; bytes that are not text in any declared encoding fail instead
// of being stored as U+FFFD; a TSV's leading comments are not its header.
const { harness } = useHarness();

type FileRow = { id: number; status: string; error: string | null; chunk_count: number | null };

async function settled(api: Api, id: number): Promise<FileRow> {
  return eventually(async () => {
    const res = await api.call('GET', '/api/v1/ext/files/');
    const f = (res.body.files as FileRow[]).find((row) => row.id === id);
    return f !== undefined && (f.status === 'processed' || f.status === 'failed') ? f : undefined;
  });
}

async function topHit(api: Api, query: string): Promise<{ knowledge_source_id: number; text: string }> {
  const hits = await api.call('POST', '/api/v1/ext/datasets/query', { json: { query, top_k: 1 } });
  expect(hits.status).toBe(200);
  return hits.body.results[0];
}

/** "Привет мир" in windows-1251. */
const HELLO_WORLD_1251 = Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2, 0x20, 0xec, 0xe8, 0xf0]);

describe('input limits and encodings through the service', () => {
  it.each([
    ['deep.json', `${'['.repeat(10_000)}${']'.repeat(10_000)}`, 'line 1, column 513'],
    ['deep.jsonl', `{"ok":true}\n${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}\n`, 'line 2, column 2561'],
  ])('%s nested 10,000 deep fails as parse_failed naming the limit, not internal', async (name, content, where) => {
    const api = apiFor(harness(), { credits: 100 });

    const res = await upload(api, name, content);
    const file = await settled(api, res.body.id);

    expect(file).toMatchObject({ status: 'failed', chunk_count: null });
    expect(file.error).toBe(
      `parse_failed: ${where}: JSON arrays and objects nested more than 512 deep, over kbsync's limit; flatten the data (or store the deep part as a string) and upload it again`,
    );
  });

  it('reads XML in the windows-1251 its prolog declares, and HTML in the Shift_JIS its meta declares', async () => {
    const api = apiFor(harness(), { credits: 100 });
    const xml = Buffer.concat([
      Buffer.from('<?xml version="1.0" encoding="windows-1251"?>\n<notes><note><body>'),
      HELLO_WORLD_1251,
      Buffer.from('</body></note></notes>'),
    ]);
    const html = Buffer.concat([
      Buffer.from('<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS"></head><body><p>'),
      Buffer.from([0x93, 0xfa, 0x96, 0x7b]),
      Buffer.from(' sushi</p></body></html>'),
    ]);

    const xmlFile = await settled(api, (await upload(api, 'notes.xml', xml)).body.id);
    const htmlFile = await settled(api, (await upload(api, 'page.html', html)).body.id);

    expect(xmlFile).toMatchObject({ status: 'processed', error: null });
    expect(htmlFile).toMatchObject({ status: 'processed', error: null });
    expect(await topHit(api, 'Привет мир')).toMatchObject({ knowledge_source_id: xmlFile.id, text: 'notes > note\nbody: Привет мир' });
    expect(await topHit(api, 'sushi')).toMatchObject({ knowledge_source_id: htmlFile.id, text: '日本 sushi' });
  });

  it('fails a text file that is not UTF-8 naming the byte, instead of storing replacement characters', async () => {
    const api = apiFor(harness(), { credits: 100 });

    const res = await upload(api, 'legacy.txt', Buffer.concat([Buffer.from('Hello\n'), HELLO_WORLD_1251]));

    expect(await settled(api, res.body.id)).toMatchObject({
      status: 'failed',
      error: 'parse_failed: not valid UTF-8 (byte offset 6); save the file as UTF-8 and upload it again',
    });
  });

  it("reads a TSV whose header is its last leading comment (zone1970.tab's layout)", async () => {
    const api = apiFor(harness(), { credits: 100 });
    const tab = '# tzdb timezone descriptions\n#\n#codes\tcoordinates\tTZ\tcomments\nAD\t+4230+00131\tEurope/Andorra\n';

    const file = await settled(api, (await upload(api, 'zone1970.tsv', tab)).body.id);

    expect(file).toMatchObject({ status: 'processed', chunk_count: 1 });
    expect((await topHit(api, 'Andorra')).text).toBe('codes: AD; coordinates: +4230+00131; TZ: Europe/Andorra');
  });
});
