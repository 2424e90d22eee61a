import { describe, expect, it } from 'vitest';
import { convertRtf } from './rtf.js';
import { DEFAULT_CONVERT_LIMITS, type ConvertResult } from './types.js';
import { fixture } from './zip.test-util.js';

type Failure = Extract<ConvertResult, { ok: false }>;
const convert = (bytes: Uint8Array | string): Promise<ConvertResult> =>
  convertRtf(typeof bytes === 'string' ? new Uint8Array(Buffer.from(bytes, 'latin1')) : bytes, {
    name: 'x.rtf',
    limits: DEFAULT_CONVERT_LIMITS,
  });

async function markdown(bytes: Uint8Array | string): Promise<string> {
  const r = await convert(bytes);
  if (!r.ok) throw new Error(r.reason);
  return r.markdown;
}

async function failure(bytes: Uint8Array | string): Promise<Failure> {
  const r = await convert(bytes);
  expect(r.ok).toBe(false);
  return r as Failure;
}

describe('convertRtf on LibreOffice RTF', () => {
  it('keeps headings by style name, lists, the table and the footnote, decoding \\u characters', async () => {
    const md = await markdown(fixture('report.rtf'));
    expect(md.split('\n').filter((l) => l.startsWith('#'))).toEqual([
      '# Harbour Survey Report',
      '# Introduction',
      '## Method',
      '## Results',
      '# Conclusions',
    ]);
    expect(md).toContain(
      '- Salinity at the surface\n  - Sampled with a refractometer\n  - Cross-checked in the laboratory\n- Water temperature\n- Visibility in metres\n',
    );
    expect(md).toContain('1. Calibrate the flow meter\n2. Lower the probe to four metres\n3. Log the reading\n');
    expect(md).toContain('| Station | Flow (m/s) | Notes |\n| --- | --- | --- |\n| North pier | 1.2 | Strong eddies |\n');
    expect(md).toContain('compared against the 1998 baseline.[^1]\n');
    expect(md.trimEnd().endsWith('[^1]: The baseline was published by the port authority in March 1998.')).toBe(true);
    expect(md).toContain('Grüße from Zürich; Ελληνικά; 日本語のテキスト.');
    expect(md).toContain('\n\\#5 is not a heading, and neither is this line’s start.\n');
  });

  it('gives byte-identical Markdown for the same bytes', async () => {
    for (const name of ['report.rtf', 'wordpad-cp1251.rtf']) {
      const [a, b] = [await markdown(fixture(name)), await markdown(fixture(name))];
      expect(a).toBe(b);
      expect(a.endsWith('\n') && !a.endsWith('\n\n')).toBe(true);
      expect(a).not.toMatch(/[ \t]$/m);
    }
  });
});

describe('convertRtf: code pages', () => {
  it('decodes \\ansicpg1251 bytes, font charsets (Greek, Shift-JIS), \\uN with \\ucN skips and surrogate pairs', async () => {
    const md = await markdown(fixture('wordpad-cp1251.rtf'));
    expect(md).toContain('# Портовый отчёт\n\nВолнолом измерено');
    expect(md.match(/^# /gm)).toHaveLength(1);
    expect(md).toContain('## Ελληνικά\n');
    expect(md).toContain('日本語 and € euro, —dash, 😀 smile, café in 1252.');
    expect(md).toContain('- первый пункт\n');
    expect(md).toContain('| Станция | Скорость |\n| --- | --- |\n| Север \\| пирс | 1.2 |\n');
    expect(md).toContain('ссылка конец.');
    expect(md).not.toContain('HYPERLINK');
    expect(md).not.toContain('\ufffd');
  });

  it("decodes the \\info title in the document's code page, whatever the default font", async () => {
    const rtf =
      "{\\rtf1\\ansi\\ansicpg932\\deff1{\\fonttbl{\\f1\\fcharset0 Century;}}{\\info{\\title \\'83\\'5e\\'83\\'43\\'83\\'67\\'83\\'8b}}Hello\\par}";
    expect(await markdown(rtf)).toBe('# タイトル\n\nHello\n');
    const ud = "{\\rtf1\\ansi{\\info{\\upr{\\title ????}{\\*\\ud{\\title \\u12479\\'3f\\u12452\\'3f}}}}Hi\\par}";
    expect(await markdown(ud)).toBe('# タイ\n\nHi\n');
  });

  it('never writes a replacement character for bytes the code page cannot read', async () => {
    const md = await markdown("{\\rtf1\\ansi\\ansicpg932 bad \\'81\\'20 pair and \\'ff end\\par}");
    expect(md).not.toContain('\ufffd');
    expect(md).toContain('bad');
    expect(md).toContain('end');
  });

  it("skips \\ucN fallback bytes inside a text run and across \\'hh", async () => {
    expect(await markdown('{\\rtf1\\ansi\\uc3\\u1046abcdef\\par}')).toBe('Жdef\n');
    expect(await markdown("{\\rtf1\\ansi\\uc2\\u1046\\'3f\\'3fx\\par}")).toBe('Жx\n');
    expect(await markdown('{\\rtf1\\ansi{\\uc1\\u1046}?\\par}')).toBe('Ж?\n');
  });
});

describe('convertRtf: hostile and damaged files', () => {
  it('fails a truncated file', async () => {
    const bytes = fixture('report.rtf');
    const r = await failure(bytes.slice(0, Math.floor(bytes.length / 2)));
    expect(r.reason).toMatch(/^the RTF file ends inside \d+ open groups?: it is truncated$/);
  });

  it('fails a file that is not RTF', async () => {
    expect((await failure(fixture('report.doc'))).reason).toBe('the file does not start with {\\rtf: it is not an RTF');
    expect((await failure('hello world')).reason).toBe('the file does not start with {\\rtf: it is not an RTF');
  });

  it('fails groups nested past the depth limit, naming it', async () => {
    const r = await failure(`{\\rtf1 ${'{'.repeat(5000)}x${'}'.repeat(5000)}}`);
    expect(r.reason).toMatch(/nests groups more than 256 deep, past the limit/);
  });

  it("reads \\* as an ignorable destination only at a group's start", async () => {
    expect(await markdown('{\\rtf1 {\\loch\\f2\\i0\\*\\cs7\\cf0 The quick brown fox}\\par}')).toBe('The quick brown fox\n');
  });

  it('writes nothing for control words named like object properties', async () => {
    expect(await markdown('{\\rtf1 a \\constructor\\toString\\valueOf  b\\emdash c\\par}')).toBe('a b\u2014c\n');
  });

  it('skips \\bin data, pictures and unknown ignorable destinations', async () => {
    const md = await markdown('{\\rtf1 before {\\pict\\pngblip 89504e47}{\\*\\unknowndest secret} \\bin6 {}{}{ after\\par}');
    expect(md).toBe('before after\n');
  });
});
