import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createWorkspace, type JsonItem, type Workspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { CONVERTER_VERSIONS } from '../../../src/convert/types.js';
import { ConversionCache } from '../../../src/sync/sources/converted.js';
import { openState } from '../../../src/sync/state/index.js';

const suite = useE2eSuite();
const FIXTURES = fileURLToPath(new URL('../../fixtures/convert/', import.meta.url));
const ALL = ['pdf', 'pptx', 'doc', 'odt', 'ods', 'odp', 'rtf', 'epub'];

/** Real documents, each of another content, and the hostile set. */
const DOCUMENTS = {
  'reports/harbour.pdf': 'report-libreoffice.pdf',
  'decks/review.pptx': 'deck-pandoc.pptx',
  'reports/flows.doc': 'report.doc',
  'books/lighthouse.epub': 'book-epub3.epub',
  'sheets/budget.ods': 'budget.ods',
  'letters/russian.rtf': 'wordpad-cp1251.rtf',
  'reports/handbook.pdf': 'handbook-chromium.pdf',
  'reports/notes.pdf': 'notes-pdftex.pdf',
};
const HOSTILE = {
  'bad/encrypted.pdf': ['encrypted.pdf', 'skip:encrypted'],
  'bad/encrypted.pptx': ['encrypted.pptx', 'skip:encrypted'],
  'bad/encrypted.odt': ['encrypted.odt', 'skip:encrypted'],
  'bad/encrypted.doc': ['encrypted.doc', 'skip:encrypted'],
  'bad/scanned.pdf': ['scanned.pdf', 'skip:no-text'],
  'bad/truncated.pdf': ['truncated.pdf', 'skip:convert-failed'],
  'bad/mislabelled.pdf': ['mislabelled.pdf', 'skip:convert-failed'],
} as const;

function workspace(convert: string[] = ALL): Workspace {
  const ds = suite.svc.dataset();
  const ws = createWorkspace(suite.temp.make(), { baseUrl: suite.svc.url, apiKey: ds.apiKey, config: { convert } });
  for (const [path, fixture] of Object.entries(DOCUMENTS)) ws.write(path, readFileSync(join(FIXTURES, fixture)));
  for (const [path, [fixture]] of Object.entries(HOSTILE)) ws.write(path, readFileSync(join(FIXTURES, fixture)));
  ws.write('decks/old.ppt', Buffer.from('legacy deck'));
  ws.write('readme.md', '# Read me\n');
  return ws;
}

const byPath = (items: readonly JsonItem[]): Map<string, JsonItem> => new Map(items.map((i) => [i.path, i]));
type QueryResult = { path: string; text: string; origin: { heading: string | null } };
async function query(ws: Workspace, text: string): Promise<QueryResult[]> {
  const run = await ws.run('query', '--json', '--top-k', '3', text);
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { results: QueryResult[] }).results;
}

describe('convert: documents reach the dataset as their Markdown', () => {
  it('plans each conversion with its price, syncs them searchable by their original names, and each failure costs nothing', async () => {
    const ws = workspace();

    const plan = await ws.runJson('plan');
    const items = byPath(plan.report.items);
    for (const path of Object.keys(DOCUMENTS)) {
      expect(items.get(path), path).toMatchObject({ action: 'upload', credits: 5, remoteName: `${path}.md` });
      expect(items.get(path)?.reason).toMatch(/^new file; converted from /);
    }
    expect(items.get('reports/harbour.pdf')?.reason).toMatch(/converted from PDF \(3 pages, [\d.]+ K?B of Markdown\)/);
    expect(items.get('decks/review.pptx')?.reason).toMatch(/converted from PowerPoint \(\d+ slides/);
    for (const [path, [, action]] of Object.entries(HOSTILE)) expect(items.get(path), path).toMatchObject({ action, credits: 0 });
    expect(items.get('bad/scanned.pdf')?.reason).toContain('does not run OCR');
    expect(items.get('bad/truncated.pdf')?.reason).toMatch(/truncated/);
    expect(items.get('decks/old.ppt')).toMatchObject({ action: 'skip:unsupported' });
    expect(items.get('decks/old.ppt')?.reason).toContain('save them as PPTX');
    expect(plan.report.summary.creditsPlanned).toBe(5 * (Object.keys(DOCUMENTS).length + 1));

    const sync = await ws.runJson('sync', '--wait');
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.report.summary.creditsSpent).toBe(5 * (Object.keys(DOCUMENTS).length + 1));

    const pdf = await query(ws, 'depth of the western channel at forty stations');
    expect(pdf[0]).toMatchObject({ path: 'reports/harbour.pdf' });
    expect(pdf[0]?.origin.heading).toMatch(/ · page 1$/);
    const notes = await query(ws, 'Berth B2 closed for dredging');
    expect(notes.map((r) => r.path)).toContain('decks/review.pptx');
    expect(notes.find((r) => r.path === 'decks/review.pptx')?.origin.heading).toMatch(/Slide \d+/);
    expect((await query(ws, 'The lamp was lit at dusk every evening'))[0]).toMatchObject({ path: 'books/lighthouse.epub' });
    expect((await query(ws, 'frost heave and livestock rubbing against the coping'))[0]).toMatchObject({ path: 'reports/notes.pdf' });
    expect((await query(ws, 'North pier strong eddies flow'))[0]).toMatchObject({ path: 'reports/flows.doc' });
    expect((await query(ws, 'Волнолом измерено станций'))[0]).toMatchObject({ path: 'letters/russian.rtf' });
    expect((await query(ws, 'Crew rota standby Müller'))[0]).toMatchObject({ path: 'sheets/budget.ods' });

    const explain = await ws.run('explain', 'bad/encrypted.pdf');
    expect(explain.stdout).toContain('skip:encrypted');
    expect(explain.stdout).toContain('password');

    const status = await ws.run('status');
    expect(status.stdout).toMatch(
      /^not converted: +4 encrypted, 1 with no text layer \(kbsync does not run OCR\), 2 damaged or not what their name says in the last sync/m,
    );
    expect(JSON.parse((await ws.run('status', '--json')).stdout)).toMatchObject({
      notConverted: { 'skip:encrypted': 4, 'skip:no-text': 1, 'skip:convert-failed': 2 },
    });
  });

  it('costs nothing again when rerun, touched, copied or renamed; a new text under the same name is one upload', async () => {
    const ws = workspace();
    const first = await ws.runJson('sync');
    expect(first.code, first.stderr).toBe(0);

    const again = await ws.runJson('sync');
    expect(again.report.summary.creditsSpent).toBe(0);

    const later = new Date(Date.now() + 60_000);
    for (const path of [...Object.keys(DOCUMENTS), ...Object.keys(HOSTILE)]) utimesSync(join(ws.docs, path), later, later);
    const touched = await ws.runJson('sync');
    expect(touched.report.summary.creditsSpent).toBe(0);
    expect(byPath(touched.report.items).get('bad/encrypted.pdf')).toMatchObject({ action: 'skip:encrypted' });

    copyFileSync(join(ws.docs, 'reports/harbour.pdf'), join(ws.docs, 'archive-copy.pdf'));
    ws.move('decks/review.pptx', 'decks/review-2024.pptx');
    const moved = await ws.runJson('sync');
    const items = byPath(moved.report.items);
    expect(moved.report.summary.creditsSpent).toBe(0);
    expect(items.get('archive-copy.pdf')).toMatchObject({ action: 'skip:duplicate-content', credits: 0 });
    expect(items.get('decks/review-2024.pptx')).toMatchObject({ action: 'rename', credits: 0 });

    copyFileSync(join(FIXTURES, 'standard-fonts.pdf'), join(ws.docs, 'reports/harbour.pdf'));
    const edited = await ws.runJson('sync');
    expect(byPath(edited.report.items).get('reports/harbour.pdf')).toMatchObject({ action: 'upload', credits: 5 });
    expect(edited.report.summary.creditsSpent).toBe(5);

    // The state lost: rebuilt from the listing (q3.pdf.md is q3.pdf's), nothing is bought again.
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${ws.statePath}${suffix}`, { force: true });
    const rebuilt = await ws.runJson('sync');
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.report.summary.creditsSpent).toBe(0);
    expect(byPath(rebuilt.report.items).get('reports/harbour.pdf')).toMatchObject({ action: 'skip:unchanged' });
  });

  it('converts nothing without the key, and a source’s own list overrides the top-level one', async () => {
    const none = workspace([]);
    const plan = byPath((await none.runJson('plan')).report.items);
    expect(plan.get('reports/harbour.pdf')).toMatchObject({ action: 'skip:unsupported' });
    expect(plan.get('reports/harbour.pdf')?.reason).toContain('only when convert: in kbsync.yaml lists pdf');

    const some = workspace();
    some.configure({ sources: [{ name: 'docs', path: './docs', convert: ['pdf'] }] });
    const own = byPath((await some.runJson('plan')).report.items);
    expect(own.get('reports/harbour.pdf')).toMatchObject({ action: 'upload' });
    expect(own.get('decks/review.pptx')).toMatchObject({ action: 'skip:unsupported' });
  });

  it('converts again the documents of a converter that changed since the state was made, and plans the new Markdown as a change', async () => {
    const ws = workspace(['pdf']);
    expect((await ws.runJson('sync')).code).toBe(0);
    const state = openState(ws.statePath);
    try {
      expect(JSON.parse(state.getMeta('convert.versions') ?? '{}')).toEqual(CONVERTER_VERSIONS);
      // As an older kbsync's converter would have left it.
      state.setMeta('convert.versions', JSON.stringify({ ...CONVERTER_VERSIONS, pdf: CONVERTER_VERSIONS.pdf - 1 }));
    } finally {
      state.close();
    }
    // Same output from the "new" converter: looked at again, nothing to pay, and the versions recorded.
    const same = await ws.runJson('sync');
    expect(same.report.summary.creditsSpent).toBe(0);
    expect(byPath(same.report.items).get('reports/harbour.pdf')).toMatchObject({ action: 'skip:unchanged' });

    // A converter whose output differs: its kept outcome for these bytes names other Markdown.
    const cache = new ConversionCache(join(ws.root, '.kbsync'));
    const original = createHash('sha256')
      .update(readFileSync(join(ws.docs, 'reports/harbour.pdf')))
      .digest('hex');
    const markdown = '<!-- page 1 -->\n\n# Harbour Survey Report, read better\n';
    const sha256 = createHash('sha256').update(markdown).digest('hex');
    cache.keep('pdf', original, { ok: true, sha256, bytes: Buffer.byteLength(markdown), units: 3 }, markdown);
    const state2 = openState(ws.statePath);
    state2.setMeta('convert.versions', JSON.stringify({ ...CONVERTER_VERSIONS, pdf: CONVERTER_VERSIONS.pdf - 1 }));
    state2.close();
    const changed = await ws.runJson('sync');
    const item = byPath(changed.report.items).get('reports/harbour.pdf');
    expect(item).toMatchObject({ action: 'upload', credits: 5 });
    expect(item?.reason).toContain('converted again');
    expect(byPath(changed.report.items).get('reports/notes.pdf')).toMatchObject({ action: 'skip:unchanged' });
    expect((await ws.runJson('sync')).report.summary.creditsSpent).toBe(0);
  });

  it('refuses an unknown type in the list, naming the line and the accepted values', async () => {
    const ws = workspace(['pdf', 'docx']);
    const run = await ws.run('plan');
    expect(run.code).not.toBe(0);
    const line =
      readFileSync(ws.configPath, 'utf8')
        .split('\n')
        .findIndex((l) => l.includes('"docx"')) + 1;
    expect(run.stderr).toContain(`kbsync.yaml:${line}: convert[1]`);
    for (const type of ALL) expect(run.stderr).toContain(type);
  });
});
