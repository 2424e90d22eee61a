import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../../../src/service/ingest/chunker.js';
import { MAX_HTML_DEPTH, MAX_HTML_TOKEN_CHARS } from '../../../../src/service/ingest/html-sections.js';
import { parseContent, parseFailure } from '../test-support.js';
import { htmlParser } from '../../../../src/service/ingest/parsers/html.js';

const chunksOf = async (html: string | Buffer): Promise<string[]> =>
  chunkDocument({ sections: await parseContent(htmlParser, 'page.html', html) });

describe('html parser', () => {
  it('keeps the main text under its heading path, without head, scripts, styles or navigation', async () => {
    const html = `<!doctype html><html><head><title>Site title</title><style>body { color: red }</style>
      <script>var secret = "tracking";</script></head>
      <body><nav><a href="/">Home</a> <a href="/about">About us</a></nav>
      <div role="navigation">Breadcrumb trail</div>
      <main><h1>Handbook</h1><p>Welcome to the <b>team</b>
      handbook.</p><h2>Leave</h2><p>Ask your manager &amp; HR.</p><noscript>Enable JavaScript</noscript>
      <div hidden>Hidden draft</div><h2>Expenses</h2><ul><li>Keep receipts</li><li>Submit <i>monthly</i></li></ul></main>
      <script>track()</script></body></html>`;

    expect(await chunksOf(html)).toEqual([
      'Handbook\nWelcome to the team handbook.',
      'Handbook > Leave\nAsk your manager & HR.',
      'Handbook > Expenses\n- Keep receipts\n- Submit monthly',
    ]);
  });

  it('writes tables row by row with their cells, and keeps preformatted text', async () => {
    const html =
      '<table><tr><th>Name</th><th>Role</th></tr><tr><td>Åsa</td><td>Ingénieure 🙂</td></tr></table><pre>line 1\n  line 2</pre><p>a<br>b</p>';

    expect(await chunksOf(html)).toEqual(['Name | Role\nÅsa | Ingénieure 🙂\n\nline 1\n  line 2\n\na\nb']);
  });

  it('reads a heading with nothing under it as a chunk of its own', async () => {
    expect(await chunksOf('<h1>Empty section</h1><h1>Next</h1><p>Text.</p>')).toEqual(['Empty section', 'Next\nText.']);
  });

  it('succeeds with no chunks for an empty page or one of only scripts', async () => {
    expect(await chunksOf('')).toEqual([]);
    expect(await chunksOf('<html><head><script>x()</script></head><body>  </body></html>')).toEqual([]);
  });

  it('keeps all of a very long paragraph, in chunks under the limit', async () => {
    const words = Array.from({ length: 100_000 }, (_, i) => `w${i}`);
    const chunks = await chunksOf(`<p>${words.join(' ')}</p>`);

    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(1500);
    const seen = new Set(chunks.flatMap((c) => c.split(/\s+/)));
    expect(words.filter((w) => !seen.has(w))).toEqual([]);
  });

  it('fails a page with a tag longer than the limit instead of holding it', async () => {
    const html = `<p>ok</p><div title="${'x'.repeat(MAX_HTML_TOKEN_CHARS + 300_000)}">`;

    expect(await parseFailure(parseContent(htmlParser, 'page.html', html))).toMatch(
      /^a tag, comment or attribute near offset \d+ is longer than 4 MiB; refused/,
    );
  });

  it('fails binary data past the start of the file', async () => {
    const data = Buffer.concat([Buffer.from(`<p>${'a'.repeat(100_000)}</p>`), Buffer.alloc(10)]);

    expect(await parseFailure(parseContent(htmlParser, 'page.html', data))).toBe(
      'not an HTML file: NUL character at offset 100007 (binary data); upload the page saved as text',
    );
  });

  it('refuses elements nested past the depth bound, unclosed or closed, naming the bound', async () => {
    const unclosed = `<p>intro</p>${'<div>'.repeat(200_000)}text`;
    const closed = `${'<div>'.repeat(100_000)}deep${'</div>'.repeat(100_000)}`;

    for (const html of [unclosed, closed]) {
      expect(await parseFailure(parseContent(htmlParser, 'page.html', html))).toMatch(
        new RegExp(`^elements are nested more than ${MAX_HTML_DEPTH} deep \\(<div> near offset \\d+; unclosed tags\\?\\); refused`),
      );
    }
  });

  it('reads a page nested right up to the depth bound', async () => {
    const html = `${'<div>'.repeat(MAX_HTML_DEPTH)}deep text${'</div>'.repeat(MAX_HTML_DEPTH)}<p>after</p>`;

    expect(await chunksOf(html)).toEqual(['deep text\n\nafter']);
  });
});
