import { createLazyLogger, type Logger } from '../shared/logger.js';
import type { ExitCode } from './exit.js';

/** Where a command writes: process.stdout/stderr, or a buffer in tests. */
export type Writer = { write(text: string): unknown; isTTY?: boolean; /** A terminal's width in characters. */ columns?: number };

/** What every command receives besides its options: its outputs, environment and folder. */
export type CliContext = {
  /** Reports and JSON documents. */
  stdout: Writer;
  /** Problems, progress and logs. */
  stderr: Writer;
  /** The environment (for ${VAR} in the config, KBSYNC_DEBUG...). */
  env: Readonly<Record<string, string | undefined>>;
  /** The folder relative paths on the command line are relative to. */
  cwd: string;
  /** The logger (pino, to stderr, API keys redacted); loaded on first use so `--help` stays fast. */
  getLogger(): Promise<Logger>;
  /**
   * The exit code main() returns when the action ends without throwing. A command sets it for an
   * outcome that is not an error (some items failed: 1; stopped by the budget: 3). Thrown errors
   * are mapped by exit.ts instead.
   */
  exitCode: ExitCode;
};

/** A context on the real process streams and environment, with any part replaced. */
export function createContext(overrides: Partial<CliContext> = {}): CliContext {
  const stderr = overrides.stderr ?? process.stderr;
  let logger: Promise<Logger> | undefined;
  return {
    stdout: process.stdout,
    env: process.env,
    cwd: process.cwd(),
    getLogger: () => {
      logger ??= Promise.resolve(createLazyLogger({}, { write: (text: string) => stderr.write(text) } as NodeJS.WritableStream));
      return logger;
    },
    ...overrides,
    stderr,
    exitCode: 0,
  };
}
