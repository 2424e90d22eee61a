import { describe, expect, it } from 'vitest';
import { createLogger, type Logger } from '../shared/logger.js';
import type { PlanAction, RunItem } from '../sync/types.js';
import { createFileLines } from './file-lines.js';

function item(path: string, action: PlanAction, reason: string): RunItem {
  return {
    source: 'docs',
    path,
    action,
    reason,
    credits: 0,
    size: 1,
    sha256: null,
    remoteName: path,
    remoteId: null,
    outcome: 'done',
    creditsCharged: 0,
    error: null,
  };
}

/** The `file` lines a logger wrote, as [path, action] pairs. */
function capture(): { lines: () => [unknown, unknown][]; log: ReturnType<typeof createFileLines> } {
  const chunks: string[] = [];
  const stream = { write: (text: string) => chunks.push(text) } as unknown as NodeJS.WritableStream;
  const log = createFileLines(createLogger({ level: 'info' }, stream));
  const lines = (): [unknown, unknown][] =>
    chunks
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'file')
      .map((l) => [l.path, l.action]);
  return { lines, log };
}

describe('the daemon file lines', () => {
  it('a deletion the state had recorded before (an earlier daemon, a sync) is not logged; a new one is, once', () => {
    const { lines, log } = capture();
    log([{ ...item('old.md', 'deleted', 'removed locally'), deletedBefore: true }, item('new.md', 'deleted', 'removed locally')]);
    log([
      { ...item('old.md', 'deleted', 'removed locally'), deletedBefore: true },
      { ...item('new.md', 'deleted', 'removed locally'), deletedBefore: true },
    ]);
    expect(lines()).toEqual([['new.md', 'deleted']]);
  });

  it('logs a skip once while its reason stays, again when it changes or after a cycle without it; never an unchanged file', () => {
    const { lines, log } = capture();
    log([
      item('a.md', 'upload', 'new file'),
      item('logo.png', 'skip:unsupported', 'unsupported file type'),
      item('b.md', 'skip:unchanged', 'unchanged'),
    ]);
    log([item('a.md', 'skip:unchanged', 'unchanged'), item('logo.png', 'skip:unsupported', 'unsupported file type')]);
    log([item('logo.png', 'skip:too-large', 'over the limit')]);
    log([]);
    log([item('logo.png', 'skip:too-large', 'over the limit')]);
    expect(lines()).toEqual([
      ['a.md', 'upload'],
      ['logo.png', 'skip:unsupported'],
      ['logo.png', 'skip:too-large'],
      ['logo.png', 'skip:too-large'],
    ]);
  });

  it('logs every paid action each time, even the same one again', () => {
    const { lines, log } = capture();
    log([item('a.md', 'upload', 'new file')]);
    log([item('a.md', 'upload', 'new file')]);
    expect(lines()).toEqual([
      ['a.md', 'upload'],
      ['a.md', 'upload'],
    ]);
  });

  it('logs a deleted file once, not at every later cycle; again if it comes back and is deleted again', () => {
    const { lines, log } = capture();
    log([item('gone.md', 'deleted', 'deleted locally; the remote copy is kept')]);
    log([item('gone.md', 'deleted', 'deleted locally; the remote copy is kept')]);
    log([item('gone.md', 'deleted', 'deleted locally; the remote copy is kept')], true);
    log([item('gone.md', 'upload', 'new file')], true);
    log([item('gone.md', 'deleted', 'deleted locally; the remote copy is kept')], true);
    expect(lines()).toEqual([
      ['gone.md', 'deleted'],
      ['gone.md', 'upload'],
      ['gone.md', 'deleted'],
    ]);
  });

  it('a paid call is logged as it settles and not again at the cycle end; one deferred unsent is logged at the end only', () => {
    const { lines, log } = capture();
    const paid = { outcome: 'done' as const, creditsCharged: 5, remoteId: '1', error: null };
    log.settled(item('a.md', 'upload', 'new file'), paid);
    log.settled(item('b.md', 'upload', 'new file'), { ...paid, deferred: { by: 'budget', period: 'run', used: 5, cap: 5 } });
    expect(lines()).toEqual([['a.md', 'upload']]);
    log([item('a.md', 'upload', 'new file'), item('b.md', 'defer:over-budget', 'over the cap')]);
    log([item('a.md', 'upload', 'new file')]);
    expect(lines()).toEqual([
      ['a.md', 'upload'],
      ['b.md', 'defer:over-budget'],
      ['a.md', 'upload'],
    ]);
  });
  it('logs a file the budget defers once per cap, though the figures in its reason move; again once it is sent and deferred anew', () => {
    const { lines, log } = capture();
    const deferred = (spent: number, by: 'day' | 'month'): RunItem => ({
      ...item('big.md', 'defer:over-budget', `would exceed maxCreditsPer${by === 'day' ? 'Day' : 'Month'} (${spent} + 6 > 100)`),
      outcome: 'not-run',
      deferredBy: by,
    });
    log([deferred(95, 'day')]);
    log([deferred(96, 'day')]);
    log([deferred(97, 'day')], true);
    log([deferred(97, 'month')]);
    log([item('big.md', 'upload', 'new file')]);
    log([deferred(99, 'month')]);
    expect(lines()).toEqual([
      ['big.md', 'defer:over-budget'],
      ['big.md', 'defer:over-budget'],
      ['big.md', 'upload'],
      ['big.md', 'defer:over-budget'],
    ]);
  });

  it('writes the same lines as a logger that redacts: only its own fields, none a secret, even when an item carries one', () => {
    const secret = 'sk-live-0123456789abcdef';
    // An item with secret-named fields besides its own, and a failed call's error.
    const leaky = {
      ...item('a.md', 'upload', 'new file'),
      outcome: 'failed',
      error: 'the service refused the upload',
      apiKey: secret,
      key: secret,
      secret,
      headers: { authorization: `Bearer ${secret}`, 'x-api-key': secret },
      target: { apiKey: secret },
    } as RunItem;
    const settledItem = { ...item('b.md', 'reprocess', 'failed before'), apiKey: secret, key: secret } as RunItem;
    const write = (logger: Logger): void => {
      const log = createFileLines(logger);
      log.settled(settledItem, { outcome: 'done', creditsCharged: 5, remoteId: 'f1', error: null });
      log([leaky, item('c.md', 'skip:secret', 'looks like a secret')]);
    };
    const out = (redactAlways: boolean): string => {
      const chunks: string[] = [];
      const stream = { write: (text: string) => chunks.push(text) } as unknown as NodeJS.WritableStream;
      const logger = createLogger({ level: 'info', base: null, timestamp: false }, stream);
      // A logger whose children keep the parent's redaction, whatever createFileLines asks of them.
      const redacting = Object.create(logger, { child: { value: (b: object) => logger.child(b) } }) as Logger;
      write(redactAlways ? redacting : logger);
      return chunks.join('');
    };
    const lines = out(false);
    expect(lines).toBe(out(true));
    expect(lines).not.toContain(secret);
    const keys = new Set(
      lines
        .split('\n')
        .filter((l) => l !== '')
        .flatMap((l) => Object.keys(JSON.parse(l) as object)),
    );
    expect([...keys].sort()).toEqual(['action', 'credits', 'error', 'level', 'msg', 'outcome', 'path', 'reason', 'source']);
  });
});
