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

/** mallopt's parameters (malloc.h). */
const M_TRIM_THRESHOLD = -1;
const M_MMAP_THRESHOLD = -3;
const M_ARENA_MAX = -8;
/** Threads beyond this share arenas: fewer heaps for freed memory to stay in, little contention here. */
const MALLOC_ARENA_LIMIT = 2;
/** glibc's own start values of both thresholds, which it otherwise raises (up to 32 and 64 MB) as large blocks are freed. */
const MALLOC_THRESHOLD_BYTES = 128 * 1024;

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
 * For a long-lived process, before it starts its worker threads, what MALLOC_ARENA_MAX,
 * MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ would do at start: threads started from now on
 * share MALLOC_ARENA_LIMIT arenas, and blocks of MALLOC_THRESHOLD_BYTES or more are mapped on their
 * own (returned when freed) with free memory past that at a heap's top returned too, instead of
 * glibc raising both thresholds so that a burst's large buffers stay in the heaps.
 * Returns false where it cannot (no glibc).
 */
export function tuneMalloc(): boolean {
  const c = libcOf();
  if (c === null) return false;
  return (
    c.mallopt(M_ARENA_MAX, MALLOC_ARENA_LIMIT) === 1 &&
    c.mallopt(M_MMAP_THRESHOLD, MALLOC_THRESHOLD_BYTES) === 1 &&
    c.mallopt(M_TRIM_THRESHOLD, MALLOC_THRESHOLD_BYTES) === 1
  );
}

/** Gives back to the system the free pages of malloc's heaps (`malloc_trim(0)`). Returns false where it cannot. */
export function trimNativeHeap(): boolean {
  const c = libcOf();
  if (c === null) return false;
  c.trim(0);
  return true;
}
