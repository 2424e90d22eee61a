import { describe, expect, it } from 'vitest';
import { createLazyLogger, createLogger, lazy, lazyLogger, logFormatOf } from './logger.js';

/** A destination that keeps the lines written to it. */
function sink(): { lines: () => Record<string, unknown>[]; stream: NodeJS.WritableStream } {
  const chunks: string[] = [];
  const stream = { write: (text: string) => chunks.push(text) } as unknown as NodeJS.WritableStream;
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('createLogger', () => {
  it('redacts API keys and secrets, wherever they sit', () => {
    const out = sink();
    const logger = createLogger({ level: 'info' }, out.stream);

    logger.info({ apiKey: 'inf_live_x', target: { apiKey: 'inf_live_y' }, headers: { authorization: 'Bearer z' }, secret: 's' }, 'opened');

    const [line] = out.lines();
    expect(JSON.stringify(line)).not.toMatch(/inf_live|Bearer z|"s"/);
    expect(line).toMatchObject({ msg: 'opened', apiKey: '[redacted]', target: { apiKey: '[redacted]' } });
  });
});

describe('createLazyLogger', () => {
  it('writes nothing and makes nothing until used; then logs, redacts and makes children like the real one', () => {
    const out = sink();
    const logger = createLazyLogger({ level: 'info' }, out.stream);
    expect(out.lines()).toEqual([]);

    logger.warn({ apiKey: 'inf_live_x', n: 1 }, 'took over a stale lock');
    logger.child({ component: 'client' }).info('child line');
    const debugEnabled = logger.isLevelEnabled('debug');
    logger.level = 'debug';

    expect(out.lines()).toMatchObject([
      { level: 40, msg: 'took over a stale lock', apiKey: '[redacted]', n: 1 },
      { level: 30, msg: 'child line', component: 'client' },
    ]);
    expect(debugEnabled).toBe(false);
    expect(logger.isLevelEnabled('debug')).toBe(true);
    expect('info' in logger).toBe(true);
  });
});

describe('lazyLogger', () => {
  it('answers calls below its level without making the logger, and makes it for the first call that writes', () => {
    const out = sink();
    let made = 0;
    const logger = lazyLogger(() => {
      made += 1;
      return createLogger({ level: 'warn' }, out.stream);
    }, 'warn');

    logger.debug({ walkAhead: { listings: 3 } }, 'walk-ahead helper');
    logger.info('quiet');
    logger.trace('quieter');
    expect(made).toBe(0);

    logger.warn('loud');
    logger.debug('still quiet, now from pino itself');
    expect(made).toBe(1);
    expect(out.lines()).toMatchObject([{ level: 40, msg: 'loud' }]);
  });

  it('makes the logger at once for a level it does not know (pino names the mistake), and never answers for silent', () => {
    let made = 0;
    const make = () => {
      made += 1;
      return createLogger({ level: 'silent' }, sink().stream);
    };
    lazyLogger(make, 'loud');
    expect(made).toBe(1);

    const silent = lazyLogger(make, 'silent');
    silent.fatal('nothing');
    expect(made).toBe(1);
    expect(() => createLogger({ level: 'loud' }, sink().stream)).toThrow(/loud/);
  });

  it('follows KBSYNC_LOG_LEVEL through createLazyLogger', () => {
    const before = process.env.KBSYNC_LOG_LEVEL;
    process.env.KBSYNC_LOG_LEVEL = 'debug';
    try {
      const out = sink();
      createLazyLogger({}, out.stream).debug('seen');
      expect(out.lines()).toMatchObject([{ level: 20, msg: 'seen' }]);
    } finally {
      if (before === undefined) delete process.env.KBSYNC_LOG_LEVEL;
      else process.env.KBSYNC_LOG_LEVEL = before;
    }
  });
});

describe('lazy', () => {
  it('makes its object on the first property use, once; resolving it as a promise value does not (no thenable)', async () => {
    let made = 0;
    const object = lazy(() => {
      made += 1;
      return {
        n: 1,
        twice(x: number) {
          return x * 2 * this.n;
        },
      };
    });

    const resolved = await Promise.resolve(object);
    expect(made).toBe(0);
    expect(resolved).toBe(object);

    expect(object.twice(3)).toBe(6);
    object.n = 5;
    expect(object.twice(3)).toBe(30);
    expect('twice' in object).toBe(true);
    expect(made).toBe(1);
  });
});

describe('the log format', () => {
  it('is pretty (colored) on a terminal and JSON lines elsewhere; KBSYNC_LOG_FORMAT decides instead, and a wrong value is named', () => {
    expect(logFormatOf({ isTTY: true }, {})).toBe('pretty-color');
    expect(logFormatOf({ isTTY: false }, {})).toBe('json');
    expect(logFormatOf({}, {})).toBe('json');
    expect(logFormatOf({ isTTY: true }, { KBSYNC_LOG_FORMAT: 'json' })).toBe('json');
    expect(logFormatOf({}, { KBSYNC_LOG_FORMAT: 'pretty' })).toBe('pretty');
    expect(() => logFormatOf({}, { KBSYNC_LOG_FORMAT: 'yaml' })).toThrow(/KBSYNC_LOG_FORMAT is "yaml": it must be json or pretty/);
  });

  it('pretty: one line of text per entry, with the time, level, message and fields, still redacted', () => {
    const chunks: string[] = [];
    const logger = createLogger({ level: 'info' }, { write: (t: string) => chunks.push(t) } as unknown as NodeJS.WritableStream, 'pretty');

    logger.info({ source: 'docs', path: 'a.md', action: 'upload', apiKey: 'inf_live_secret' }, 'file');

    const text = chunks.join('');
    expect(text.split('\n').filter((l) => l !== '')).toHaveLength(1);
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: file \{/);
    expect(text).toContain('"source":"docs"');
    expect(text).toContain('"action":"upload"');
    expect(text).toContain('"apiKey":"[redacted]"');
    expect(text).not.toContain('inf_live_secret');
    expect(text).not.toMatch(/^\{/);
    expect(text).not.toContain('\u001b['); // not colored off a terminal
  });
});
