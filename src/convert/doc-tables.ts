/** The tables of a Word 97-2003 file that word-extractor reads but does not keep: paragraph properties, styles, lists, revisions. */

/** The built-in style ids of Heading 1-9 are 1-9; Title's is 62 ([MS-DOC] 2.9.260, sti). */
export const STI_TITLE = 62;
const SPRM_P_ILVL = 0x260a;
const SPRM_P_ILFO = 0x460b;
const SPRM_P_OUTLVL = 0x2640;
const SPRM_P_FTTP = 0x2417;
const SPRM_P_FINNER_TTP = 0x244c;
/** Properties too large for the FKP (a wide table's row end) live in the Data stream; this sprm holds their offset. */
const SPRM_P_HUGE_PAPX = 0x6646;

/** One paragraph's properties, for the file positions [fc, fcNext). */
export type Papx = { fc: number; fcNext: number; istd: number; outline: number; ilfo: number; ilvl: number; ttp: boolean };

/** Calls `each(sprm, valueOffset)` for every property modifier in `buf` from `offset` ([MS-DOC] 2.2.5.1: the operand size is in the sprm). */
export function eachSprm(buf: Buffer, offset: number, each: (sprm: number, at: number) => void): void {
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
export function readPapx(word: Buffer, table: Buffer, data: Buffer | undefined): Papx[] {
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
export function readListNumbering(word: Buffer, table: Buffer): (ilfo: number, ilvl: number) => boolean {
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
export function readStyleIds(word: Buffer, table: Buffer): number[] {
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

const SPRM_C_FRMARKDEL = 0x0800;

/**
 * The file-position ranges of text marked deleted by a tracked revision (sprmCFRMarkDel in the CHPX
 * FKPs, [MS-DOC] 2.9.39 ChpxFkp). word-extractor compares only the sprm's low five bits, so any
 * character property ending in 0x00 (letter spacing, sprmCDxaSpace 0x8840, among them) deleted the text.
 */
export function deletedRanges(word: Buffer, table: Buffer): [number, number][] {
  const fc = word.readUInt32LE(0x00fa);
  const lcb = word.readUInt32LE(0x00fe);
  const count = (lcb - 4) / 8;
  const plc = table.subarray(fc, fc + lcb);
  const out: [number, number][] = [];
  for (let i = 0; i < count; i++) {
    const block = plc.readUInt32LE((count + 1) * 4 + i * 4);
    const fkp = word.subarray(block * 512, (block + 1) * 512);
    if (fkp.length < 512) continue;
    const crun = fkp.readUInt8(511);
    for (let j = 0; j < crun; j++) {
      const rgb = fkp.readUInt8((crun + 1) * 4 + j);
      if (rgb === 0) continue;
      const grpprl = fkp.subarray(rgb * 2 + 1, rgb * 2 + 1 + fkp.readUInt8(rgb * 2));
      let deleted = false;
      eachSprm(grpprl, 0, (sprm, at) => {
        if (sprm === SPRM_C_FRMARKDEL && at < grpprl.length) deleted = (grpprl.readUInt8(at) & 1) === 1;
      });
      if (deleted) out.push([fkp.readUInt32LE(j * 4), fkp.readUInt32LE((j + 1) * 4)]);
    }
  }
  return out;
}
