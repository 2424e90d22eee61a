import { createRequire } from 'node:module';
import type { Logger, LoggerOptions, pino as pinoFunction } from 'pino';
import type { PrettyOptions } from 'pino-pretty';
import { KbsyncError } from './errors.js';
import { printableLogLine } from './printable.js';

export type { Logger };

/** Paths pino must always censor: API keys and secrets never reach a log line. */
export const REDACT_PATHS = [
  'apiKey',
  '*.apiKey',
  'target.apiKey',
  'headers["x-api-key"]',
  'headers.authorization',
  '*.headers["x-api-key"]',
  '*.headers.authorization',
  'secret',
  '*.secret',
  'key',
  '*.key',
];

/** pino, loaded when a logger is first made (it is CommonJS: require works synchronously). */
function pino(): typeof pinoFunction {
  return (createRequire(import.meta.url)('pino') as { pino: typeof pinoFunction }).pino;
}

/** How log lines are written: pino's JSON lines, or pino-pretty's one-line text for people (colored on a terminal). */
export type LogFormat = 'json' | 'pretty' | 'pretty-color';

/**
 * The log format for `stream` (stderr): pretty text, colored, when it is a terminal, where a person
 * reads it; JSON lines otherwise (a file, a pipe, journald, Docker's log driver), for machines.
 * KBSYNC_LOG_FORMAT=json or =pretty decides instead; any other value is refused, naming it.
 */
export function logFormatOf(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): LogFormat {
  const asked = env.KBSYNC_LOG_FORMAT;
  if (asked === 'json') return 'json';
  const tty = stream.isTTY === true;
  if (asked === 'pretty') return tty ? 'pretty-color' : 'pretty';
  if (asked !== undefined && asked !== '')
    throw new KbsyncError(
      'usage',
      `KBSYNC_LOG_FORMAT is "${asked}": it must be json or pretty (or unset: pretty on a terminal, JSON lines otherwise)`,
    );
  return tty ? 'pretty-color' : 'json';
}

/** `destination` behind pino-pretty (loaded only here): each JSON line pino writes becomes one line of text. */
function prettyDestination(destination: NodeJS.WritableStream, colorize: boolean): NodeJS.WritableStream {
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as {
    prettyFactory: (options: PrettyOptions) => (line: string) => string;
  };
  const pretty = prettyFactory({ colorize, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  return { write: (line: string) => destination.write(printableLogLine(pretty(line))) } as NodeJS.WritableStream;
}

/**
 * A pino logger with kbsync's redaction rules; logs go to stderr so stdout stays for reports. The
 * redaction is pino's, before a line is formatted: a pretty line is as censored as a JSON one.
 */
export function createLogger(
  options: LoggerOptions = {},
  destination: NodeJS.WritableStream = process.stderr,
  format: LogFormat = 'json',
): Logger {
  return pino()(
    { level: process.env.KBSYNC_LOG_LEVEL ?? 'warn', redact: { paths: REDACT_PATHS, censor: '[redacted]' }, ...options },
    format === 'json' ? destination : prettyDestination(destination, format === 'pretty-color'),
  );
}

/**
 * createLogger(), made on first use: most commands never write a log line, and loading pino would
 * slow every start. A call at a level the logger leaves out (debug and info at the default
 * `warn`) makes nothing.
 */
export function createLazyLogger(
  options: LoggerOptions = {},
  destination: NodeJS.WritableStream = process.stderr,
  format: LogFormat = 'json',
): Logger {
  return lazyLogger(() => createLogger(options, destination, format), options.level ?? process.env.KBSYNC_LOG_LEVEL ?? 'warn');
}

/** pino's levels by name, and a logger method's level (undefined: not a level method). */
const LEVELS: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };
const levelOf = (prop: string | symbol): number | undefined => (typeof prop === 'string' && prop !== 'silent' ? LEVELS[prop] : undefined);
const ignore = (): void => {};

/**
 * A logger made by `make` on first use, whose level is `level`; until it is made, calls of the level
 * methods below that level are answered without making it (they would write nothing). A level name
 * pino does not know makes it at once, so that pino says what is wrong with it.
 */
export function lazyLogger(make: () => Logger, level: string): Logger {
  const threshold = LEVELS[level];
  if (threshold === undefined) return make();
  return lazy(make, (prop) => {
    const methodLevel = levelOf(prop);
    return methodLevel !== undefined && methodLevel < threshold ? ignore : undefined;
  });
}

/**
 * An object made by `make` on first use: every property read, write or `in` test goes to it (the
 * first one makes it), methods come bound to it. It is no thenable: `await` and promise resolution
 * look for a `then`, and must not make it. `before` may answer a property read while the object is
 * not made yet (undefined: make it and read the property).
 */
export function lazy<T extends object>(make: () => T, before?: (prop: string | symbol) => unknown): T {
  let real: T | undefined;
  const target = (): T => (real ??= make());
  return new Proxy({} as T, {
    get(_, prop) {
      if (prop === 'then') return undefined;
      if (real === undefined && before !== undefined) {
        const answer = before(prop);
        if (answer !== undefined) return answer;
      }
      const object = target();
      const value: unknown = Reflect.get(object, prop, object);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
    set: (_, prop, value) => Reflect.set(target(), prop, value),
    has: (_, prop) => Reflect.has(target(), prop),
  });
}

/** A logger that writes nothing (tests, library use). */
export function silentLogger(): Logger {
  return pino()({ level: 'silent' });
}
