import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/** Paths pino must always censor: API keys and secrets never reach a log line. */
export const REDACT_PATHS = [
  'apiKey', '*.apiKey', 'target.apiKey', 'headers["x-api-key"]', 'headers.authorization',
  '*.headers["x-api-key"]', '*.headers.authorization', 'secret', '*.secret', 'key', '*.key',
];

/** A pino logger with kbsync's redaction rules; logs go to stderr so stdout stays for reports. */
export function createLogger(options: LoggerOptions = {}, destination: NodeJS.WritableStream = process.stderr): Logger {
  return pino(
    { level: process.env.KBSYNC_LOG_LEVEL ?? 'warn', redact: { paths: REDACT_PATHS, censor: '[redacted]' }, ...options },
    destination,
  );
}

/** A logger that writes nothing (tests, library use). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
