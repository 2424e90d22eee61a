/** The defaults of a file's parse limits (docs/service.md), in a module of their own: the CLI names them without loading the service. */
export const DEFAULT_PARSE_TIME_LIMIT_MS = 300_000;
export const DEFAULT_PARSE_MEMORY_LIMIT_MB = 1024;
