import { describe, expect, it } from 'vitest';
import { createProgress } from './progress.js';

function terminal(columns?: number): { out: { write(t: string): void; isTTY: boolean; columns?: number }; text: () => string } {
  let text = '';
  return { out: { write: (t: string) => void (text += t), isTTY: true, ...(columns !== undefined ? { columns } : {}) }, text: () => text };
}

describe('createProgress', () => {
  it('redraws at most every 100 ms within a phase, but always at a change of phase and at the end of one', () => {
    const t = terminal();
    let now = 0;
    const p = createProgress(t.out, { nowMs: () => now });

    p.update('hashing', 1, 3);
    now = 50;
    p.update('hashing', 2, 3);
    p.update('hashing', 3, 3);
    p.update('uploading', 1, 100, 'a.md');
    for (let i = 2; i < 100; i++) p.update('uploading', i, 100, 'x.md');
    now = 200;
    p.update('uploading', 100, 100, 'z.md');
    p.finish();

    const draws = t
      .text()
      .split('\r')
      .filter((d) => d !== '');
    expect(draws.map((d) => d.replace(/\x1b\[K$/, ''))).toEqual([
      `hashing   [${'#'.repeat(8)}${'.'.repeat(16)}] 1/3 `,
      `hashing   [${'#'.repeat(24)}] 3/3 `,
      `uploading [${'.'.repeat(24)}] 1/100 a.md`,
      `uploading [${'#'.repeat(24)}] 100/100 z.md`,
      '',
    ]);
  });

  it("shows an ETA from the phase's own rate once a second has passed, none at its end", () => {
    const t = terminal();
    let now = 0;
    const p = createProgress(t.out, { nowMs: () => now });

    p.update('hashing', 10, 10);
    now = 5000;
    p.update('uploading', 0, 1000, 'a.md');
    now = 5500;
    p.update('uploading', 50, 1000, 'b.md');
    now = 7000;
    p.update('uploading', 200, 1000, 'c.md');
    now = 7000 + 4000 * 60;
    p.update('uploading', 999, 1000, 'd.md');
    now += 1000;
    p.update('uploading', 1000, 1000, 'e.md');

    const draws = t
      .text()
      .split('\r')
      .filter((d) => d !== '')
      .map((d) => d.replace(/\x1b\[K$/, '').replace(/^.*\] /, ''));
    expect(draws).toEqual(['10/10 ', '0/1000 a.md', '50/1000 b.md', '200/1000 ETA 8s c.md', '999/1000 ETA 1s d.md', '1000/1000 e.md']);
  });

  it("fits the terminal's width, keeping the end of a long path", () => {
    const t = terminal(60);
    const p = createProgress(t.out, { nowMs: () => 0 });

    p.update('uploading', 1, 2, `docs/${'deep/'.repeat(20)}file.md`);

    const line = t
      .text()
      .slice(1)
      .replace(/\x1b\[K$/, '');
    expect(line.length).toBe(59);
    expect(line).toMatch(/^uploading \[#{12}\.{12}\] 1\/2 ….*\/deep\/file\.md$/);
  });

  it('writes nothing off a terminal, nor when disabled (--json)', () => {
    let text = '';
    const pipe = createProgress({ write: (s: string) => void (text += s) });
    const off = createProgress({ write: (s: string) => void (text += s), isTTY: true }, { enabled: false });

    for (const p of [pipe, off]) {
      p.update('uploading', 1, 1, 'a.md');
      p.finish();
    }

    expect(text).toBe('');
  });
});
