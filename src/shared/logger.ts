import { createRequire } from 'node:module';
import type { Logger, LoggerOptions, pino as pinoFunction } from 'pino';

export type { Logger };

/** Paths pino must always censor: API keys and secrets never reach a log line. */
export const REDACT_PATHS = [
  'apiKey', '*.apiKey', 'target.apiKey', 'headers["x-api-key"]', 'headers.authorization',
  '*.headers["x-api-key"]', '*.headers.authorization', 'secret', '*.secret', 'key', '*.key',
];

/** pino, loaded when a logger is first made (it is CommonJS: require works synchronously). */
function pino(): typeof pinoFunction {
  return (createRequire(import.meta.url)('pino') as { pino: typeof pinoFunction }).pino;
}

/** A pino logger with kbsync's redaction rules; logs go to stderr so stdout stays for reports. */
export function createLogger(options: LoggerOptions = {}, destination: NodeJS.WritableStream = process.stderr): Logger {
  return pino()(
    { level: process.env.KBSYNC_LOG_LEVEL ?? 'warn', redact: { paths: REDACT_PATHS, censor: '[redacted]' }, ...options },
    destination,
  );
}

/**
 * createLogger(), made on first use: most commands never write a log line, and loading pino costs
 * ~25 ms of every start. Every property read, write or `in` test on it goes to the real logger,
 * which the first one creates; methods come bound to it.
 */
export function createLazyLogger(options: LoggerOptions = {}, destination: NodeJS.WritableStream = process.stderr): Logger {
  let real: Logger | undefined;
  const logger = (): Logger => (real ??= createLogger(options, destination));
  return new Proxy({} as Logger, {
    get(_, prop) {
      const target = logger();
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
    set: (_, prop, value) => Reflect.set(logger(), prop, value),
    has: (_, prop) => Reflect.has(logger(), prop),
  });
}

/** A logger that writes nothing (tests, library use). */
export function silentLogger(): Logger {
  return pino()({ level: 'silent' });
}
