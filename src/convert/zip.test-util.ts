// Test support only: rebuilds real fixtures' zips with hostile entries (lying sizes, bombs, damaged parts).
import { readFileSync } from 'node:fs';
import { crc32, deflateRawSync } from 'node:zlib';
import { unzipSync } from 'fflate';

export type ZipEntry = {
  name: string;
  /** The bytes as stored (already deflated when `method` is 8). */
  stored: Buffer;
  method: 0 | 8;
  crc: number;
  /** What the headers say the entry inflates to (a hostile archive may lie). */
  declaredSize: number;
};

export function deflated(name: string, content: string | Uint8Array): ZipEntry {
  const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
  return { name, stored: deflateRawSync(data), method: 8, crc: crc32(data), declaredSize: data.length };
}

export function stored(name: string, content: string | Uint8Array): ZipEntry {
  const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
  return { name, stored: data, method: 0, crc: crc32(data), declaredSize: data.length };
}

/** A zip archive of these entries, written as given (local headers, data, central directory, end record). */
export function zipOf(entries: readonly ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(e.method, 8);
    local.writeUInt32LE(e.crc >>> 0, 14);
    local.writeUInt32LE(e.stored.length, 18);
    local.writeUInt32LE(e.declaredSize, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(e.method, 10);
    central.writeUInt32LE(e.crc >>> 0, 16);
    central.writeUInt32LE(e.stored.length, 20);
    central.writeUInt32LE(e.declaredSize, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, e.stored);
    centrals.push(central, name);
    offset += local.length + name.length + e.stored.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

export const fixture = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(new URL(`../../test/fixtures/convert/${name}`, import.meta.url)));

/** A fixture's zip rebuilt with `change` applied to its entries (names in the archive's order, deflated anew). */
export function rezip(name: string, change: (entries: ZipEntry[]) => ZipEntry[]): Uint8Array {
  const files = unzipSync(fixture(name));
  const entries = Object.entries(files).map(([n, data]) => (n === 'mimetype' ? stored(n, data) : deflated(n, data)));
  return new Uint8Array(zipOf(change(entries)));
}

/** A part of `size` bytes of one repeated letter, deflated: a small entry that inflates far past what it weighs. */
export const bombPart = (name: string, size: number): ZipEntry => deflated(name, Buffer.alloc(size, 0x41));
