import { describe, expect, it } from 'vitest';
import { createPathFilter } from './path-filter.js';

const none = (): null => null;

describe('createPathFilter', () => {
  it('knows which folders can hold included files', () => {
    const filter = createPathFilter(['docs/guide/**/*.md', 'README.md'], []);

    expect(['', 'docs', 'docs/guide', 'docs/guide/deep'].map((d) => filter.mayIncludeUnder(d))).toEqual([true, true, true, true]);
    expect(['src', 'docs/api', 'docsx'].map((d) => filter.mayIncludeUnder(d))).toEqual([false, false, false]);
  });

  it('walks everywhere when an include glob starts with a wildcard', () => {
    expect(createPathFilter(['**/*.md'], []).mayIncludeUnder('any/where')).toBe(true);
  });

  it('excludes a whole folder by "dir/**" or by its name', () => {
    const filter = createPathFilter(['**/*'], ['drafts/**', 'tmp']);

    expect([filter.folderExcludedBy('drafts'), filter.folderExcludedBy('tmp'), filter.folderExcludedBy('docs')]).toEqual([
      'drafts/**',
      'tmp',
      null,
    ]);
  });

  it('classifies in order: outside the include globs, secret, ignored, excluded, unsupported, candidate', () => {
    const filter = createPathFilter(['docs/**'], ['docs/old/*.md']);
    const ignored = (p: string): string | null => (p.endsWith('ignored.md') ? 'matches .gitignore: *ignored.md' : null);

    expect(filter.classifyFile('src/.env', '.env', ignored)).toBe('outside');
    expect(filter.classifyFile('docs/.env', '.env', ignored)).toEqual({ reason: 'secret', detail: 'named like .env; never read' });
    expect(filter.classifyFile('docs/ignored.md', 'ignored.md', ignored)).toEqual({
      reason: 'ignored',
      detail: 'matches .gitignore: *ignored.md',
    });
    expect(filter.classifyFile('docs/old/a.md', 'a.md', none)).toEqual({ reason: 'ignored', detail: 'matches exclude: docs/old/*.md' });
    expect(filter.classifyFile('docs/a.png', 'a.png', none)).toEqual({
      reason: 'unsupported',
      detail: '.png files are not a supported type',
    });
    expect(filter.classifyFile('docs/a.XLSX', 'a.XLSX', none)).toBe('candidate');
  });

  it('makes a candidate of a document whose type convert lists; another convertible type says how to have it converted', () => {
    const filter = createPathFilter(['**/*'], [], ['pdf']);
    const none = (): null => null;

    expect(filter.classifyFile('q3.pdf', 'q3.pdf', none)).toBe('candidate');
    expect(filter.classifyFile('Q3.PDF', 'Q3.PDF', none)).toBe('candidate');
    expect(filter.classifyFile('deck.pptx', 'deck.pptx', none)).toEqual({
      reason: 'unsupported',
      detail: '.pptx files are converted to Markdown only when convert: in kbsync.yaml lists pptx',
    });
    expect(filter.classifyFile('old.ppt', 'old.ppt', none)).toEqual({
      reason: 'unsupported',
      detail: '.ppt files (PowerPoint 97-2003) cannot be converted: save them as PPTX (File > Save As) to sync them',
    });
    expect(createPathFilter(['**/*'], []).classifyFile('q3.pdf', 'q3.pdf', none)).toMatchObject({ reason: 'unsupported' });
  });
});

describe('lock and temporary files of editors and office suites', () => {
  const filter = createPathFilter(['**'], []);
  const verdict = (name: string): ReturnType<typeof filter.classifyFile> => filter.classifyFile(`docs/${name}`, name, none);

  it('ignores Office owner files and LibreOffice lock files, whatever their extension, with what they are', () => {
    for (const name of ['~$report.docx', '~$book.xlsx', '~$deck.pptx', '~$x.md'])
      expect(verdict(name), name).toEqual({
        reason: 'ignored',
        detail: 'a Microsoft Office owner file (~$...): Office writes it beside a document while it is open; never synced',
      });
    expect(verdict('.~lock.report.docx#')).toEqual({
      reason: 'ignored',
      detail: 'a LibreOffice lock file (.~lock...#): written beside a document while it is open; never synced',
    });
  });

  it('ignores emacs and vim temporary files as such, not as unsupported types', () => {
    expect(verdict('#notes.md#')).toMatchObject({
      reason: 'ignored',
      detail: expect.stringMatching(/^an emacs auto-save file/) as unknown,
    });
    expect(verdict('.#notes.md')).toMatchObject({ reason: 'ignored', detail: expect.stringMatching(/^an emacs lock file/) as unknown });
    expect(verdict('.notes.md.swp')).toMatchObject({ reason: 'ignored', detail: expect.stringMatching(/^a vim swap file/) as unknown });
    expect(verdict('notes.md~')).toMatchObject({ reason: 'ignored', detail: expect.stringMatching(/^a backup copy/) as unknown });
  });

  it('leaves names that only look alike to the other rules', () => {
    for (const name of ['report~$.docx', 'a$b.md', '~notes.md', 'lock.md', '.~lock.md', 'c#.md', 'swp.md'])
      expect(verdict(name), name).toBe('candidate');
  });
});
