import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSettleWait, newestChangeUnder } from '../../src/watch/settle.js';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

const at = (iso: string): Date => new Date(iso);

describe('newestChangeUnder (is a folder a burst named still being written?)', () => {
  it('is the latest time of the folder and of every file and folder below it; links, .git and node_modules are not followed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-settle-'));
    made.push(dir);
    mkdirSync(join(dir, 'a/b'), { recursive: true });
    mkdirSync(join(dir, '.git'));
    mkdirSync(join(dir, 'node_modules'));
    writeFileSync(join(dir, 'top.md'), 'x');
    writeFileSync(join(dir, 'a/b/deep.md'), 'x');
    writeFileSync(join(dir, '.git/index'), 'x');
    writeFileSync(join(dir, 'node_modules/x.js'), 'x');
    const outside = mkdtempSync(join(tmpdir(), 'kbsync-settle-out-'));
    made.push(outside);
    writeFileSync(join(outside, 'later.md'), 'x');
    symlinkSync(outside, join(dir, 'link'));
    const old = at('2020-01-01T00:00:00Z');
    for (const p of ['top.md', 'a/b/deep.md', 'a/b', 'a', '.git/index', 'node_modules/x.js', '.git', 'node_modules', '.'])
      utimesSync(join(dir, p), old, old);
    utimesSync(join(outside, 'later.md'), old, at('2024-01-01T00:00:00Z'));
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(newestChangeUnder(dir, now)).toBe(old.getTime());

    utimesSync(join(dir, 'a/b/deep.md'), old, at('2021-06-01T00:00:00Z'));
    expect(newestChangeUnder(dir, now)).toBe(Date.parse('2021-06-01T00:00:00Z'));
    // A time ahead of now (a skewed clock) is left out.
    utimesSync(join(dir, 'top.md'), old, at('2030-01-01T00:00:00Z'));
    expect(newestChangeUnder(dir, now)).toBe(Date.parse('2021-06-01T00:00:00Z'));
  });

  it("leaves out what the daemon ignores (its state, the embedded service's data)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-settle-'));
    made.push(dir);
    mkdirSync(join(dir, 'data'));
    writeFileSync(join(dir, 'doc.md'), 'x');
    writeFileSync(join(dir, 'data/busy.db'), 'x');
    const old = at('2020-01-01T00:00:00Z');
    for (const p of ['doc.md', '.']) utimesSync(join(dir, p), old, old);
    // A millisecond on: a file's mtime has a fraction, and busy.db may have been written in this very millisecond.
    const now = Date.now() + 1;
    expect(newestChangeUnder(dir, now)).toBeGreaterThan(old.getTime());
    expect(newestChangeUnder(dir, now, (abs) => abs === join(dir, 'data'))).toBe(old.getTime());
  });

  it('is nothing for a path gone or not a folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbsync-settle-'));
    made.push(dir);
    writeFileSync(join(dir, 'f.md'), 'x');
    expect(newestChangeUnder(join(dir, 'gone'), Date.now())).toBe(Number.NEGATIVE_INFINITY);
    expect(newestChangeUnder(join(dir, 'f.md'), Date.now())).toBe(Number.NEGATIVE_INFINITY);
  });
});

describe('createSettleWait (does a burst wait for the folders it names whole?)', () => {
  it('waits while a folder named whole changed within debounceMs, never for a folder named for its own entries, and at most 20 debounces in a row', () => {
    const root = mkdtempSync(join(tmpdir(), 'kbsync-settle-'));
    made.push(root);
    mkdirSync(join(root, 'new'));
    writeFileSync(join(root, 'new/f.md'), 'x');
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const writtenAt = (ms: number): void => {
      for (const p of ['new/f.md', 'new']) utimesSync(join(root, p), new Date(ms), new Date(ms));
    };
    const wait = createSettleWait({ debounceMs: 100, roots: new Map([['docs', root]]), ignored: () => false });
    const whole = new Map([['docs', [{ dir: 'new', direct: false }]]]);
    const direct = new Map([
      [
        'docs',
        [
          { dir: 'new', direct: true },
          { dir: '', direct: false },
        ],
      ],
    ]);

    writtenAt(t0 - 10);
    expect(wait(whole, t0)).toBe(t0 - 10);
    expect(wait(direct, t0)).toBeNull();
    expect(wait(new Map([['other', [{ dir: 'new', direct: false }]]]), t0)).toBeNull();
    // Settled: no wait.
    expect(wait(whole, t0 + 90)).toBeNull();
    // Written on and on: waited for, until 20 debounces have passed since the wait began.
    writtenAt(t0 + 1000);
    expect(wait(whole, t0 + 1001)).toBe(t0 + 1000);
    writtenAt(t0 + 2990);
    expect(wait(whole, t0 + 3000)).toBe(t0 + 2990);
    writtenAt(t0 + 3000);
    expect(wait(whole, t0 + 3001)).toBeNull();
    // The next burst waits again.
    writtenAt(t0 + 3005);
    expect(wait(whole, t0 + 3010)).toBe(t0 + 3005);
  });
});
