import { createRequire } from 'node:module';
import type Koffi from 'koffi';

/**
 * glibc's malloc, steered from inside the process through koffi (a foreign-function interface with
 * prebuilt binaries), because its environment variables (MALLOC_ARENA_MAX, MALLOC_TRIM_THRESHOLD_)
 * are read only when a process starts, and the service also runs embedded in the CLI's process.
 * Memory that threads free (parsers' buffers, V8's compiler zones, SQLite's pages) stays in the
 * allocator's heaps, one arena per thread that allocated, and only their top is ever given back on
 * its own: `malloc_trim` gives back every free page of every arena. Where there is no glibc (macOS,
 * musl, Windows) or koffi does not load, each call does nothing.
 */
type Libc = { trim: (pad: number) => number; mallopt: (param: number, value: number) => number };

/** mallopt's parameter for the most arenas malloc creates (malloc.h). */
const M_ARENA_MAX = -8;
/** Threads beyond this share arenas: fewer heaps for freed memory to stay in, little contention here. */
export const MALLOC_ARENA_LIMIT = 2;

let libc: Libc | null | undefined;

function libcOf(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  if (process.platform !== 'linux') return libc;
  // glibc's library by its name: musl has none of that name (nor malloc_trim), so loading fails there.
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof Koffi;
    const lib = koffi.load('libc.so.6');
    libc = {
      trim: lib.func('int malloc_trim(size_t pad)') as (pad: number) => number,
      mallopt: lib.func('int mallopt(int param, int value)') as (param: number, value: number) => number,
    };
  } catch {
    libc = null;
  }
  return libc;
}

/**
 * Caps the arenas malloc creates from now on at MALLOC_ARENA_LIMIT (threads started later share
 * them), as MALLOC_ARENA_MAX would at start. Call before a long-lived process starts its worker
 * threads. Returns false where it cannot (no glibc).
 */
export function limitMallocArenas(): boolean {
  const c = libcOf();
  return c !== null && c.mallopt(M_ARENA_MAX, MALLOC_ARENA_LIMIT) === 1;
}

/** Gives back to the system the free pages of malloc's heaps (`malloc_trim(0)`). Returns false where it cannot. */
export function trimNativeHeap(): boolean {
  const c = libcOf();
  if (c === null) return false;
  c.trim(0);
  return true;
}
