import { describe, expect, it } from 'vitest';
import { PackedColumn } from './packed-column.js';
import { MTIME_CODEC, mtimeColumn, mtimeColumnOfText, sameMtime } from './mtime-column.js';
import { SHA256_CODEC, sha256ColumnOfHex } from './sha256-column.js';
import { createPrng } from '../../../test/helpers/prng.js';

// Texts an mtime column holds packed, and texts it must keep aside as they are (not canonical).
const PACKED = ['0', '1', '-1', '42', '999999999', '1000000000', '-1000000000', '1718000000123456789', '1764874000123456800'];
const PACKED_TOO = ['9223372036854775807', '-9223372036854775808', '-1234567890123', '123456789012345678901234'];
const ASIDE = ['', '-', '-0', '007', '1e5', ' 1', '1.5', '1234567890123456789012345', '12a'];

describe('mtime columns', () => {
  it('read back every text as it was set, packing the canonical ones in 12 bytes', () => {
    const values = [...PACKED, ...PACKED_TOO, ...ASIDE];
    const column = mtimeColumn(values);
    expect(Array.from({ length: column.length }, (_, row) => column.at(row))).toEqual(values);
    const aside = [...column.oddRows()].map(([, v]) => v);
    expect(aside).toEqual(ASIDE);
    expect(column.bytes.length).toBe(values.length * 12);
  });

  it('compare a text with a row as the strings compare, for every pair', () => {
    const values = [...PACKED, ...PACKED_TOO, ...ASIDE];
    const column = mtimeColumn(values);
    for (let row = 0; row < values.length; row++)
      for (const text of values) expect([row, text, sameMtime(column, row, text)]).toEqual([row, text, values[row] === text]);
  });

  it('parse a joined text in place, and refuse one that holds more or fewer values, naming it', () => {
    const column = mtimeColumnOfText('1,-1,1718000000123456789,007', 4, ',', 'tracked files of source "docs"');
    expect([0, 1, 2, 3].map((row) => column.at(row))).toEqual(['1', '-1', '1718000000123456789', '007']);
    expect(mtimeColumnOfText('', 0, ',', 'x').length).toBe(0);
    for (const [text, count] of [
      ['1,2,3', 2],
      ['1,2', 3],
      ['1', 0],
    ] as const)
      expect(() => mtimeColumnOfText(text, count, ',', 'tracked files of source "docs"')).toThrow(
        `tracked files of source "docs": mtime_ns does not hold ${count} values joined by ","`,
      );
  });
});

describe('packed columns', () => {
  it('hold what an array holds through sets, appends, inserts, removals, picks and joins (200 random runs)', () => {
    const pool = [...PACKED, ...ASIDE];
    for (let seed = 1; seed <= 200; seed++) {
      const rng = createPrng(seed);
      const pick = (): string => pool[rng.int(0, pool.length - 1)] as string;
      let model = Array.from({ length: rng.int(0, 20) }, pick);
      let column = mtimeColumn(model);
      for (let step = 0; step < 40; step++) {
        const op = rng.next();
        const row = rng.int(0, model.length);
        if (op < 0.3) {
          const value = pick();
          column.set(row, value);
          model[row] = value;
        } else if (op < 0.55) {
          const value = pick();
          column.insert(row);
          column.set(row, value);
          model.splice(row, 0, value);
        } else if (op < 0.8 && model.length > 0) {
          const at = Math.min(row, model.length - 1);
          column.remove(at);
          model.splice(at, 1);
        } else if (op < 0.9) {
          const order = model.length === 0 ? [] : Array.from({ length: rng.int(0, model.length) }, () => rng.int(0, model.length - 1));
          column = column.picked(order);
          model = order.map((r) => model[r] as string);
        } else {
          const more = Array.from({ length: rng.int(0, 5) }, pick);
          column = PackedColumn.joined(MTIME_CODEC, [column, mtimeColumn(more)]);
          model = [...model, ...more];
        }
        expect(
          Array.from({ length: column.length }, (_, r) => column.at(r)),
          `seed ${seed} step ${step}`,
        ).toEqual(model);
      }
    }
  });

  it('refuse a row past the end, naming it', () => {
    const column = new PackedColumn(MTIME_CODEC);
    expect(() => column.at(0)).toThrow('no row 0 in a column of 0 rows');
    expect(() => column.set(1, '1')).toThrow('no row 1 in a column of 0 rows');
    expect(new PackedColumn(SHA256_CODEC).length).toBe(0);
  });

  it('read concatenated hex of either case as sha256s, and refuse hex of the wrong length or not hex', () => {
    const a = 'ab'.repeat(32);
    const column = sha256ColumnOfHex(`${a}${'CD'.repeat(32)}`, 2, 'x');
    expect([column.at(0), column.at(1)]).toEqual([a, 'cd'.repeat(32)]);
    expect(() => sha256ColumnOfHex(a, 2, 'tracked files of source "docs"')).toThrow(
      'tracked files of source "docs": sha256 holds 64 characters, 64 of them hex digits, for 2 files (64 each)',
    );
    expect(() => sha256ColumnOfHex(`${'zz'}${a.slice(2)}`, 1, 'x')).toThrow('x: sha256 holds 64 characters, 0 of them hex digits');
  });
});
