import { encrypted } from './failure.js';

/** What one paragraph of a Word 97-2003 document says of itself (from its PAPX and the style sheet). */
export type DocParagraph = {
  text: string;
  /** 1-9 for a paragraph in a built-in Heading style (or with a direct outline level), 1 for the Title style, else 0. */
  heading: number;
  /** List level (0-based) for a paragraph in a list, else -1. */
  listLevel: number;
  /** Whether that list level writes numbers (else bullets). */
  numbered: boolean;
  /** How the paragraph ends: a paragraph mark, a table cell's end, a table row's end. */
  end: 'paragraph' | 'cell' | 'row';
};

export type DocText = { body: DocParagraph[]; footnotes: string[]; endnotes: string[]; textboxes: string[]; footnoteRefs: number };

type Papx = { fc: number; fcNext: number; istd: number; outline: number; ilfo: number; ilvl: number; ttp: boolean };

/** The built-in style ids of Heading 1-9 are 1-9; Title's is 62 ([MS-DOC] 2.9.260, sti). */
const STI_TITLE = 62;
const SPRM_P_ILVL = 0x260a;
const SPRM_P_ILFO = 0x460b;
const SPRM_P_OUTLVL = 0x2640;
const SPRM_P_FTTP = 0x2417;
const SPRM_P_FINNER_TTP = 0x244c;
/** Properties too large for the FKP (a wide table's row end) live in the Data stream; this sprm holds their offset. */
const SPRM_P_HUGE_PAPX = 0x6646;

/** Calls `each(sprm, valueOffset)` for every property modifier in `buf` from `offset` ([MS-DOC] 2.2.5.1: the operand size is in the sprm). */
function eachSprm(buf: Buffer, offset: number, each: (sprm: number, at: number) => void): void {
  while (offset < buf.length - 1) {
    const sprm = buf.readUInt16LE(offset);
    offset += 2;
    each(sprm, offset);
    const spra = (sprm >> 13) & 7;
    if (spra === 0 || spra === 1) offset += 1;
    else if (spra === 2 || spra === 4 || spra === 5) offset += 2;
    else if (spra === 3) offset += 4;
    else if (spra === 7) offset += 3;
    else offset += (buf[offset] ?? 0) + 1;
  }
}

/** Every paragraph's properties from the PAPX FKPs ([MS-DOC] 2.9.177 PlcBtePapx, 2.9.175 PapxFkp), by file position. */
function readPapx(word: Buffer, table: Buffer, data: Buffer | undefined): Papx[] {
  const fc = word.readUInt32LE(0x0102);
  const lcb = word.readUInt32LE(0x0106);
  const count = (lcb - 4) / 8;
  const plc = table.subarray(fc, fc + lcb);
  const out: Papx[] = [];
  for (let i = 0; i < count; i++) {
    const block = plc.readUInt32LE((count + 1) * 4 + i * 4);
    const fkp = word.subarray(block * 512, (block + 1) * 512);
    if (fkp.length < 512) continue;
    const crun = fkp.readUInt8(511);
    for (let j = 0; j < crun; j++) {
      const bx = fkp.readUInt8((crun + 1) * 4 + j * 13) * 2;
      const cb = fkp.readUInt8(bx);
      const grpprl = cb !== 0 ? fkp.subarray(bx + 1, bx + 1 + 2 * cb - 1) : fkp.subarray(bx + 2, bx + 2 + 2 * fkp.readUInt8(bx + 1));
      if (grpprl.length < 2) continue;
      const p: Papx = {
        fc: fkp.readUInt32LE(j * 4),
        fcNext: fkp.readUInt32LE((j + 1) * 4),
        istd: grpprl.readUInt16LE(0),
        outline: 9,
        ilfo: 0,
        ilvl: 0,
        ttp: false,
      };
      const apply = (prl: Buffer, from: number, huge = false): void =>
        eachSprm(prl, from, (sprm, at) => {
          if (at >= prl.length) return;
          if (sprm === SPRM_P_ILVL) p.ilvl = prl.readUInt8(at);
          else if (sprm === SPRM_P_ILFO && at + 1 < prl.length) p.ilfo = prl.readInt16LE(at);
          else if (sprm === SPRM_P_OUTLVL) p.outline = prl.readUInt8(at);
          else if (sprm === SPRM_P_FTTP || sprm === SPRM_P_FINNER_TTP) p.ttp = prl.readUInt8(at) !== 0;
          else if (sprm === SPRM_P_HUGE_PAPX && !huge && data !== undefined && at + 4 <= prl.length) {
            // [MS-DOC] 2.9.209 PrcData: a 2-byte size, then the properties.
            const offset = prl.readUInt32LE(at);
            if (offset + 2 > data.length) return;
            apply(data.subarray(offset + 2, Math.min(data.length, offset + 2 + data.readUInt16LE(offset))), 0, true);
          }
        });
      apply(grpprl, 2);
      out.push(p);
    }
  }
  return out.sort((a, b) => a.fc - b.fc);
}

/** Number formats (nfc) that write no number: a bullet, or nothing ([MS-DOC] 2.9.150 LVLF, MS-OSHARED nfc table). */
const NFC_BULLET = 0x17;
const NFC_NONE = 0xff;

/**
 * Which list levels are numbered, by the paragraph's ilfo (1-based into the PlfLfo) and ilvl: the LFO's lsid
 * names an LSTF of the PlfLst, whose LVLs follow the PlfLst in the table stream ([MS-DOC] 2.9.151 PlfLst,
 * 2.9.154 PlfLfo). A list the file does not describe reads as bulleted.
 */
function readListNumbering(word: Buffer, table: Buffer): (ilfo: number, ilvl: number) => boolean {
  const unknown = (): boolean => false;
  if (word.length < 0x02f2) return unknown;
  const fcLst = word.readUInt32LE(0x02e2);
  const lcbLst = word.readUInt32LE(0x02e6);
  const fcLfo = word.readUInt32LE(0x02ea);
  const lcbLfo = word.readUInt32LE(0x02ee);
  if (lcbLst < 2 || lcbLfo < 4 || fcLst + lcbLst > table.length || fcLfo + lcbLfo > table.length) return unknown;
  const numbered = new Map<number, boolean[]>();
  const count = table.readInt16LE(fcLst);
  let lvl = fcLst + lcbLst;
  for (let i = 0; i < count; i++) {
    const lstf = fcLst + 2 + i * 28;
    if (lstf + 28 > table.length) return unknown;
    const lsid = table.readInt32LE(lstf);
    const simple = (table.readUInt8(lstf + 26) & 1) === 1;
    const levels: boolean[] = [];
    for (let l = 0; l < (simple ? 1 : 9); l++) {
      if (lvl + 28 > table.length) return unknown;
      const nfc = table.readUInt8(lvl + 4);
      levels.push(nfc !== NFC_BULLET && nfc !== NFC_NONE);
      const after = lvl + 28 + table.readUInt8(lvl + 25) + table.readUInt8(lvl + 24);
      if (after + 2 > table.length) return unknown;
      lvl = after + 2 + table.readUInt16LE(after) * 2;
    }
    numbered.set(lsid, levels);
  }
  const lfos: number[] = [];
  const lfoCount = table.readUInt32LE(fcLfo);
  for (let i = 0; i < lfoCount && fcLfo + 4 + (i + 1) * 16 <= table.length; i++) lfos.push(table.readInt32LE(fcLfo + 4 + i * 16));
  return (ilfo, ilvl) => {
    const lsid = lfos[ilfo - 1];
    const levels = lsid === undefined ? undefined : numbered.get(lsid);
    return levels?.[Math.min(ilvl, levels.length - 1)] ?? false;
  };
}

/** The built-in style id (sti) of each style by istd, from the style sheet ([MS-DOC] 2.9.271 STSH, 2.9.260 StdfBase). */
function readStyleIds(word: Buffer, table: Buffer): number[] {
  const fc = word.readUInt32LE(0x00a2);
  const lcb = word.readUInt32LE(0x00a6);
  const stsh = table.subarray(fc, fc + lcb);
  if (stsh.length < 4) return [];
  const cbStshi = stsh.readUInt16LE(0);
  const cstd = stsh.readUInt16LE(2);
  const ids: number[] = [];
  let at = 2 + cbStshi;
  for (let i = 0; i < cstd && at + 2 <= stsh.length; i++) {
    const cbStd = stsh.readUInt16LE(at);
    ids.push(cbStd >= 2 && at + 4 <= stsh.length ? stsh.readUInt16LE(at + 2) & 0x0fff : -1);
    at += 2 + cbStd;
  }
  return ids;
}

/**
 * Reads a Word 97-2003 file with word-extractor (its OLE reader, piece table, deletions and field
 * handling), adding what it reads but does not keep: each paragraph's style (headings), list level and
 * table cell/row ends. An encrypted file (the FIB's fEncrypted bit) is refused before its text is read.
 */
export async function readDoc(bytes: Buffer): Promise<DocText> {
  const { default: WordOleExtractor } = await import('word-extractor/lib/word-ole-extractor.js');
  const { default: BufferReader } = await import('word-extractor/lib/buffer-reader.js');
  const { clean } = await import('word-extractor/lib/filters.js');
  let papx: Papx[] = [];
  let dataStream: Buffer | undefined;
  let styles: number[] = [];
  let numbering: (ilfo: number, ilvl: number) => boolean = () => false;
  class Extractor extends WordOleExtractor {
    override extractWordDocument(document: unknown, buffer: Buffer): Promise<unknown> {
      if (buffer.length >= 0x0c && (buffer.readUInt16LE(0x0a) & 0x0100) !== 0) {
        return Promise.reject(encrypted('the DOC file is password-protected (encrypted); remove the password and save it again'));
      }
      const ole = document as { _rootStorage?: { _dirEntry?: { streams?: Record<string, unknown> } } };
      if (ole._rootStorage?._dirEntry?.streams?.Data === undefined) return super.extractWordDocument(document, buffer);
      return this.documentStream(document, 'Data')
        .then((stream) => this.streamBuffer(stream))
        .then((data) => {
          dataStream = data;
          return super.extractWordDocument(document, buffer);
        });
    }
    override writeParagraphProperties(buffer: Buffer, tableBuffer: Buffer): void {
      super.writeParagraphProperties(buffer, tableBuffer);
      papx = readPapx(buffer, tableBuffer, dataStream);
      styles = readStyleIds(buffer, tableBuffer);
      try {
        numbering = readListNumbering(buffer, tableBuffer);
      } catch {
        // A damaged list table: its items are written as bullets.
      }
    }
  }
  const extractor = new Extractor();
  const reader = new BufferReader(bytes);
  await reader.open();
  await extractor.extract(reader);
  const pieces = extractor._pieces;
  const b = extractor._boundaries;

  const range = (start: number, end: number): string => {
    let out = '';
    for (const p of pieces) {
      if (p.endCp <= start || p.startCp >= end) continue;
      out += p.text.slice(Math.max(0, start - p.startCp), Math.min(p.length, end - p.startCp));
    }
    return out;
  };
  const fcOf = (cp: number): number => {
    const p = pieces.find((x) => cp >= x.startCp && cp < x.endCp);
    return p === undefined ? -1 : p.startFilePos + (cp - p.startCp) * p.bpc;
  };
  const papxAt = (fc: number): Papx | undefined => {
    let lo = 0;
    let hi = papx.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const p = papx[mid] as Papx;
      if (fc < p.fc) hi = mid - 1;
      else if (fc >= p.fcNext) lo = mid + 1;
      else return p;
    }
    return undefined;
  };

  // Paragraphs of the main text: split at paragraph marks (\r), cell ends (\x07) and row ends (the
  // row-end mark, which word-extractor has already turned into \n).
  const text = range(0, b.ccpText);
  const body: DocParagraph[] = [];
  let start = 0;
  let footnoteRefs = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x0d && c !== 0x07 && c !== 0x0a && c !== 0x0c) continue;
    const p = papxAt(fcOf(i));
    // word-extractor turns a row end into \n only when its FKP says so; a wide row's says so in the Data stream.
    const end = c === 0x0a || (c === 0x07 && p?.ttp === true) ? 'row' : c === 0x07 ? 'cell' : 'paragraph';
    const sti = p === undefined ? -1 : (styles[p.istd] ?? -1);
    const heading = sti >= 1 && sti <= 9 ? sti : sti === STI_TITLE ? 1 : p !== undefined && p.outline < 9 ? p.outline + 1 : 0;
    const raw = text.slice(start, i);
    footnoteRefs += raw.split('\u0002').length - 1;
    body.push({
      text: clean(raw.replace(/\u0002/g, '\ue000')),
      heading,
      listLevel: p !== undefined && p.ilfo > 0 ? Math.min(8, p.ilvl) : -1,
      numbered: p !== undefined && p.ilfo > 0 && numbering(p.ilfo, p.ilvl),
      end,
    });
    start = i + 1;
  }
  if (start < text.length) body.push({ text: clean(text.slice(start)), heading: 0, listLevel: -1, numbered: false, end: 'paragraph' });
  const notes = (from: number, length: number): string[] =>
    length <= 0
      ? []
      : range(from, from + length)
          .split('\u0002')
          .slice(1)
          .map((n) => clean(n).replace(/\s+/g, ' ').trim())
          .filter((n) => n !== '');
  const footnotes = notes(b.ccpText, b.ccpFtn);
  const endnotes = notes(b.ccpText + b.ccpFtn + b.ccpHdd + b.ccpAtn, b.ccpEdn);
  const txbxStart = b.ccpText + b.ccpFtn + b.ccpHdd + b.ccpAtn + b.ccpEdn;
  const textboxes = b.ccpTxbx > 0 ? clean(range(txbxStart, txbxStart + b.ccpTxbx)).split('\n') : [];
  return { body, footnotes, endnotes, textboxes, footnoteRefs };
}
