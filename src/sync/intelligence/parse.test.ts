import { describe, expect, it } from 'vitest';
import { parseEntries } from './parse.js';

describe('parseEntries', () => {
  it('reads a JSONL record per line, with contentField, title and metadata; a bad line names its line and field', () => {
    const text = [
      '{"text": "Deploys happen on Tuesdays.", "title": "Deploys", "metadata": {"team": "ops"}}',
      '',
      '{"text": ""}',
      'not json',
      '{"body": "x"}',
      '{"text": "Backups run nightly."}',
    ].join('\n');
    const { entries, problems } = parseEntries('faq.jsonl', text, 'text');
    expect(entries).toEqual([
      { key: '1', line: 1, content: 'Deploys happen on Tuesdays.', title: 'Deploys', metadata: { team: 'ops' } },
      { key: '6', line: 6, content: 'Backups run nightly.' },
    ]);
    expect(problems.map((p) => [p.line, p.field])).toEqual([
      [3, 'text'],
      [4, null],
      [5, 'text'],
    ]);
    expect(problems[2]?.message).toContain('no "text" field');
  });

  it('reads YAML FAQ items (question and answer) and records, with the line each starts on', () => {
    const text = [
      '- question: When do we deploy?',
      '  answer: On Tuesdays.',
      '- content: Backups run nightly.',
      '  title: Backups',
      '- 42',
    ].join('\n');
    const { entries, problems } = parseEntries('faq.yaml', text, 'content');
    expect(entries).toEqual([
      { key: '1', line: 1, content: 'When do we deploy?\n\nOn Tuesdays.', title: 'When do we deploy?' },
      { key: '2', line: 3, content: 'Backups run nightly.', title: 'Backups' },
    ]);
    expect(problems).toEqual([{ line: 5, field: null, message: expect.stringContaining('record 3: not an object') as string }]);
  });

  it('reads a JSON list, or a mapping with an entries list; a syntax error names its line', () => {
    expect(parseEntries('a.json', '{"entries": [{"content": "A"}, {"content": "B"}]}', 'content').entries.map((e) => e.content)).toEqual([
      'A',
      'B',
    ]);
    expect(parseEntries('a.json', '{"content": "One fact."}', 'content').entries).toEqual([{ key: '1', line: 1, content: 'One fact.' }]);
    expect(parseEntries('a.yaml', '"just text"', 'content').problems[0]?.message).toContain('expected a list of records');
    const bad = parseEntries('a.json', '[\n{"content": "A"},\n{"content": }\n]', 'content');
    expect(bad.entries).toEqual([]);
    expect(bad.problems[0]?.line).toBe(3);
  });

  it('reads CSV rows (the header names the columns; the others become metadata) and names a missing column', () => {
    const text = 'content,title,team\nDeploys happen on Tuesdays.,Deploys,ops\n"Backups run\nnightly.",,\n';
    const { entries, problems } = parseEntries('faq.csv', text, 'content');
    expect(problems).toEqual([]);
    expect(entries).toEqual([
      { key: '1', line: 2, content: 'Deploys happen on Tuesdays.', title: 'Deploys', metadata: { team: 'ops' } },
      { key: '2', line: 4, content: 'Backups run\nnightly.', metadata: { team: '' } },
    ]);
    const missing = parseEntries('faq.csv', 'text\nx\n', 'content');
    expect(missing.problems[0]).toMatchObject({ line: 1, field: 'content' });
  });

  it('reads a Markdown section per heading (code fences kept whole), skipping empty ones', () => {
    const text = ['Intro text.', '# Deploys', 'On Tuesdays.', '```', '# not a heading', '```', '## Empty', '', '# Deploys', 'Again.'].join(
      '\n',
    );
    const { entries } = parseEntries('runbook.md', text, 'content');
    expect(entries.map((e) => [e.key, e.line, e.title])).toEqual([
      ['top', 1, undefined],
      ['deploys', 2, 'Deploys'],
      ['deploys-2', 9, 'Deploys'],
    ]);
    expect(entries[1]?.content).toBe('Deploys\n\nOn Tuesdays.\n```\n# not a heading\n```');
  });
});
