import { failed } from './failure.js';
import { charsetCodePage, codePageEncoding, decodeBytes } from './rtf-decode.js';
import { rtfTokens } from './rtf-tokens.js';
import { KEPT_IGNORABLE, SKIPPED, SYMBOLS } from './rtf-words.js';

/** One paragraph of an RTF document with what its properties say. */
export type RtfParagraph = {
  text: string;
  style: number;
  outline: number;
  list: 'none' | 'bullet' | 'number';
  level: number;
  /** Inside a table (`\intbl`): its text belongs to the cell that `\cell` ends. */
  intbl: boolean;
  end: 'paragraph' | 'cell' | 'row';
};
export type RtfDocument = {
  paragraphs: RtfParagraph[];
  styles: Map<number, string>;
  styleOutline: Map<number, number>;
  notes: string[];
  title: string;
};

type Group = {
  dest: 'text' | 'skip' | 'info' | 'fonttbl' | 'stylesheet' | 'title' | 'listtext' | 'footnote';
  uc: number;
  font: number;
  /** The bytes' code page: the font's charset, or the document's default. */
  encoding: string | undefined;
  /** Paragraph properties are saved and restored with groups, as Word does. */
  para: Para;
};

/** One-byte arrays for each \'hh value, shared. */
const HEX_BYTES = Array.from({ length: 256 }, (_, b) => Uint8Array.of(b));

type Para = { style: number; outline: number; intbl: boolean; level: number; ls: boolean };
const freshPara = (): Para => ({ style: 0, outline: 9, intbl: false, level: 0, ls: false });

/**
 * Reads RTF into paragraphs: text decoded through `\ansicpg` and each font's `\fcharset` (`\'hh` bytes
 * gathered so double-byte code pages decode whole), `\uN` with `\ucN` fallback characters skipped,
 * paragraph styles, outline levels, list paragraphs, table cells and rows, footnotes and the title.
 * Groups nested past `maxDepth` fail the file, as does one left open at the end (a truncated file).
 */
export function readRtf(bytes: Uint8Array, maxDepth: number): RtfDocument {
  const doc: RtfDocument = { paragraphs: [], styles: new Map(), styleOutline: new Map(), notes: [], title: '' };
  const fonts = new Map<number, string | undefined>();
  let defaultEncoding: string | undefined = 'windows-1252';
  let defaultFont = -1;
  const stack: Group[] = [];
  let g: Group = { dest: 'text', uc: 1, font: -1, encoding: defaultEncoding, para: freshPara() };
  let started = false;
  let skip = 0;
  // Text bytes not yet decoded: runs as they came (subarrays of the input) and \'hh bytes.
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const push = (bytes: Uint8Array): void => {
    pending.push(bytes);
    pendingBytes += bytes.length;
  };
  let text = '';
  let listText = '';
  let pendingList: 'none' | 'bullet' | 'number' = 'none';
  let note = '';
  let styleName = '';
  let styleNumber = 0;
  let styleOutline = 9;
  let fontNumber = -1;
  let fontEncoding: string | undefined;
  const recordFont = (): void => {
    if (fontNumber >= 0) fonts.set(fontNumber, fontEncoding);
    fontNumber = -1;
    fontEncoding = undefined;
  };
  let nextDest: Group['dest'] | undefined;
  // `\*` marks an ignorable destination only as a group's first token; elsewhere (Word writes `{\loch\*\cs7 text}`) it means nothing.
  let groupStart = false;
  let noteDepth = -1;

  const flushBytes = (): void => {
    if (pendingBytes === 0) return;
    // Document properties and style names are in the document's code page (\ansicpg), not a font's.
    const encoding = g.dest === 'title' || g.dest === 'stylesheet' ? defaultEncoding : g.encoding;
    const s = decodeBytes(pending.length === 1 ? (pending[0] as Uint8Array) : Buffer.concat(pending, pendingBytes), encoding);
    pending = [];
    pendingBytes = 0;
    emit(s);
  };
  const emit = (s: string): void => {
    if (g.dest === 'text') text += s;
    else if (g.dest === 'footnote') note += s;
    else if (g.dest === 'title') doc.title += s;
    else if (g.dest === 'listtext') listText += s;
    else if (g.dest === 'stylesheet') styleName += s;
  };
  const endParagraph = (end: RtfParagraph['end']): void => {
    flushBytes();
    if (g.dest === 'footnote') {
      note += ' ';
      return;
    }
    if (g.dest !== 'text') return;
    const { para } = g;
    const list = pendingList !== 'none' ? pendingList : para.ls ? 'bullet' : 'none';
    doc.paragraphs.push({ text, style: para.style, outline: para.outline, list, level: para.level, intbl: para.intbl, end });
    text = '';
    pendingList = 'none';
  };

  for (const t of rtfTokens(bytes)) {
    if (!started) {
      if (t.type !== 'open') break;
      started = true;
      continue;
    }
    if (t.type === 'open' || t.type === 'close') {
      flushBytes();
      skip = 0;
      if (t.type === 'open') {
        if (stack.length + 1 >= maxDepth)
          throw failed(`the RTF file nests groups more than ${maxDepth} deep, past the limit: a hostile file, or raise maxDepth`);
        stack.push(g);
        g = { ...g, para: { ...g.para } };
        nextDest = undefined;
        groupStart = true;
        continue;
      }
      if (g.dest === 'fonttbl') recordFont();
      if (g.dest === 'stylesheet' && stack[stack.length - 1]?.dest === 'stylesheet') {
        doc.styles.set(styleNumber, styleName.replace(/;\s*$/, '').trim());
        if (styleOutline < 9) doc.styleOutline.set(styleNumber, styleOutline);
        styleName = '';
        styleNumber = 0;
        styleOutline = 9;
      }
      if (g.dest === 'listtext' && stack[stack.length - 1]?.dest !== 'listtext') {
        pendingList = /^\s*(\(?[0-9]+|[a-z]|[ivxlc]+)[.)]\s*$/i.test(listText) ? 'number' : 'bullet';
        listText = '';
      }
      if (g.dest === 'footnote' && stack.length === noteDepth) {
        doc.notes.push(note.replace(/\s+/g, ' ').trim());
        note = '';
        noteDepth = -1;
      }
      const closing = g.dest;
      groupStart = false;
      const outer = stack.pop();
      if (outer === undefined) break;
      g = outer;
      if (closing === 'fonttbl' && g.dest !== 'fonttbl') g.encoding = fonts.get(defaultFont) ?? defaultEncoding;
      continue;
    }
    const atGroupStart = groupStart;
    groupStart = false;
    if (skip > 0) {
      skip--;
      if (t.type === 'text' && t.bytes.length > 1) {
        const rest = t.bytes.subarray(1 + Math.min(skip, t.bytes.length - 1));
        skip = Math.max(0, skip - (t.bytes.length - 1));
        if (rest.length > 0) push(rest);
      }
      continue;
    }
    if (t.type === 'text') {
      push(t.bytes);
      continue;
    }
    if (t.type === 'hex') {
      push(HEX_BYTES[t.byte] as Uint8Array);
      continue;
    }
    if (t.type === 'bin') continue;
    flushBytes();
    if (t.type === 'symbol') {
      if (t.symbol === '*') nextDest = atGroupStart ? 'skip' : undefined;
      else if (t.symbol === '~') emit('\u00a0');
      else if (t.symbol === '_') emit('\u2011');
      else if (t.symbol === '\\' || t.symbol === '{' || t.symbol === '}') emit(t.symbol);
      else if (t.symbol === '\t') emit(' ');
      continue;
    }
    const { word, param } = t;
    if (g.dest === 'skip') continue;
    if (g.dest === 'info') {
      if (word === 'title') {
        // The last title wins: Word writes an ANSI one, then {\*\ud{\title ...}} with its Unicode form.
        g.dest = 'title';
        doc.title = '';
      }
      continue;
    }
    if (nextDest === 'skip' && !KEPT_IGNORABLE.has(word)) {
      g.dest = 'skip';
      nextDest = undefined;
      continue;
    }
    nextDest = undefined;
    switch (word) {
      case 'ansicpg':
        defaultEncoding = codePageEncoding(param ?? 1252);
        g.encoding = defaultEncoding;
        break;
      case 'mac':
        defaultEncoding = 'macintosh';
        g.encoding = defaultEncoding;
        break;
      case 'pc':
      case 'pca':
        defaultEncoding = undefined;
        g.encoding = defaultEncoding;
        break;
      case 'deff':
        defaultFont = param ?? -1;
        break;
      case 'uc':
        g.uc = Math.max(0, Math.min(10, param ?? 1));
        break;
      case 'u': {
        const code = (param ?? 0) < 0 ? (param ?? 0) + 65536 : (param ?? 0);
        emit(String.fromCharCode(code));
        skip = g.uc;
        break;
      }
      case 'f':
        if (g.dest === 'fonttbl') {
          recordFont();
          fontNumber = param ?? 0;
        } else {
          g.font = param ?? defaultFont;
          g.encoding = fonts.has(g.font) ? (fonts.get(g.font) ?? defaultEncoding) : defaultEncoding;
        }
        break;
      case 'fcharset': {
        const cp = charsetCodePage(param ?? 1);
        if (g.dest === 'fonttbl') fontEncoding = cp === undefined ? undefined : codePageEncoding(cp);
        break;
      }
      case 'cpg':
        if (g.dest === 'fonttbl') fontEncoding = codePageEncoding(param ?? 1252);
        break;
      case 'plain':
        g.font = defaultFont;
        g.encoding = fonts.get(defaultFont) ?? defaultEncoding;
        break;
      case 'info':
        g.dest = 'info';
        break;
      case 'fonttbl':
      case 'stylesheet':
        g.dest = word;
        break;
      case 'footnote':
        g.dest = 'footnote';
        noteDepth = stack.length;
        break;
      case 'listtext':
      case 'pntext':
        g.dest = 'listtext';
        listText = '';
        break;
      case 's':
        if (g.dest === 'stylesheet') styleNumber = param ?? 0;
        else g.para.style = param ?? 0;
        break;
      case 'outlinelevel':
        if (g.dest === 'stylesheet') styleOutline = param ?? 9;
        else g.para.outline = param ?? 9;
        break;
      case 'pard':
        g.para = freshPara();
        break;
      case 'intbl':
        g.para.intbl = true;
        break;
      case 'ilvl':
        g.para.level = Math.max(0, Math.min(8, param ?? 0));
        break;
      case 'ls':
        g.para.ls = true;
        break;
      case 'par':
      case 'sect':
        endParagraph('paragraph');
        break;
      case 'cell':
        endParagraph('cell');
        break;
      case 'row':
        if (g.dest === 'text') doc.paragraphs.push({ text: '', style: 0, outline: 9, list: 'none', level: 0, intbl: true, end: 'row' });
        break;
      case 'line':
      case 'tab':
      case 'nestcell':
      case 'nestrow':
        emit(' ');
        break;
      case 'page':
        endParagraph('paragraph');
        break;
      case 'chftn':
        if (g.dest === 'text') text += `[^${doc.notes.length + 1}]`;
        break;
      default:
        if (SYMBOLS.has(word)) emit(SYMBOLS.get(word) as string);
        else if (SKIPPED.has(word)) g.dest = 'skip';
    }
  }
  if (!started) throw failed('the file does not start with {\\rtf: it is not an RTF');
  if (stack.length > 0)
    throw failed(`the RTF file ends inside ${stack.length} open group${stack.length === 1 ? '' : 's'}: it is truncated`);
  flushBytes();
  if (text.trim() !== '') endParagraph('paragraph');
  return doc;
}
