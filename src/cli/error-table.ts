import type { ErrorCode } from '../shared/errors.js';

type Exit = 0 | 1 | 2 | 3 | 4 | 5;

/** What an error code means, what the user should do about it, and the exit code it ends a command with. */
export type ErrorInfo = { exit: Exit; meaning: string; action: string };

/**
 * Every error code, once: exit.ts reads it to print hints and choose exit codes, and
 * docs/errors.md is generated from it. A new code in src/shared/errors.ts must get a row here
 * (the Record type makes that a compile error until it does).
 */
export const ERROR_TABLE: Record<ErrorCode, ErrorInfo> = {
  // config and usage
  config_invalid: {
    exit: 2,
    meaning: 'The config file has problems; each is listed as `FILE:LINE: PATH: MESSAGE`.',
    action: 'Fix each listed line (keys: docs/config.md), then run `kbsync config check`.',
  },
  config_not_found: {
    exit: 2,
    meaning:
      'There is no config file at the given path, or, without `-c`, no `kbsync.yaml` in the working folder or a folder above it (up to $HOME).',
    action: 'Run `kbsync init` to write a starter file, or pass `-c FILE`.',
  },
  usage: {
    exit: 2,
    meaning: 'The command line is wrong: unknown command or option, missing or bad argument, or a file in the way.',
    action: 'See `kbsync --help` and `kbsync COMMAND --help`.',
  },
  // API: the service's table in docs/api.md
  invalid_request: {
    exit: 1,
    meaning: 'The service rejected a request as malformed (HTTP 400).',
    action: 'Check `target.dialect` against your service; if it matches, report it with KBSYNC_DEBUG=1 output.',
  },
  unauthorized: {
    exit: 4,
    meaning: 'The service does not accept the API key (HTTP 401).',
    action: 'Check `target.apiKey` / `target.apiKeyFile` (and `target.dialect.authHeader`); the key must belong to the dataset.',
  },
  insufficient_credits: {
    exit: 4,
    meaning:
      "The dataset's credit balance is below the operation's cost (HTTP 402); nothing was charged. A sync stops spending and defers the files it did not send.",
    action:
      'Add credits on the service (embedded target: `kbsync sync` prints the `kbsync serve credits add` command with its data folder, dataset id and the credits the deferred work needs; `kbsync serve credits add --help`); the next run sends the deferred files.',
  },
  tier_required: {
    exit: 4,
    meaning: 'The operation needs an Advanced-tier plan (pro, team, enterprise) (HTTP 403).',
    action: 'Upgrade the plan, or set `target.plan` to the plan you have so kbsync stops asking.',
  },
  mode_forbidden: {
    exit: 4,
    meaning: "Writing intelligence while the agent's dataset is `read_only` (HTTP 403).",
    action:
      "Switch the agent's dataset mode to `self_learning`, or set `ensureSelfLearning: true` on the intelligence source so kbsync does it.",
  },
  forbidden: {
    exit: 4,
    meaning: 'The resource belongs to another dataset (HTTP 403).',
    action: 'Check `target.datasetId` and that the key belongs to that dataset.',
  },
  not_found: {
    exit: 1,
    meaning: 'Unknown agent, file, webhook or dataset (HTTP 404).',
    action: 'Check the id you gave; `target.datasetId` must be the dataset of the key.',
  },
  limit_reached: {
    exit: 4,
    meaning: 'A service limit is reached, e.g. an 11th webhook (HTTP 409).',
    action: 'Remove an existing one first.',
  },
  idempotency_in_progress: {
    exit: 1,
    meaning: 'The same paid request is still running on the service (HTTP 409).',
    action: 'Run again in a moment; kbsync never pays twice for it.',
  },
  file_too_large: {
    exit: 1,
    meaning: "A file is over the plan's size limit (HTTP 413).",
    action: 'kbsync skips such files and lists them; raise the plan, or exclude the file.',
  },
  unsupported_file_type: {
    exit: 1,
    meaning: 'The service does not accept this file type (HTTP 415).',
    action: 'Exclude the file, or convert it to a supported type (md, txt, csv, json, html, docx...).',
  },
  validation_failed: {
    exit: 1,
    meaning: 'A value is out of range for the service, e.g. top-k over 20 (HTTP 422).',
    action: 'Use a smaller value; see the message for which one.',
  },
  idempotency_mismatch: {
    exit: 5,
    meaning: 'kbsync reused an idempotency key for a different request (HTTP 422): a bug.',
    action: 'Please report it with KBSYNC_DEBUG=1 output; nothing was charged.',
  },
  rate_limited: {
    exit: 4,
    meaning:
      'The service asked kbsync to slow down (HTTP 429) and kbsync could not get past it: a call refused again after 3 waits for its `Retry-After`, or a free call (a listing) asked to wait longer than `upload.maxRetryAfterSeconds`. Nothing was charged; a sync defers the files it did not send.',
    action: 'Lower `upload.requestsPerSecond` or `upload.concurrency`, or run again later.',
  },
  internal: {
    exit: 1,
    meaning: 'The service failed (HTTP 5xx); a failed call is not charged.',
    action: 'Run again later.',
  },
  // the local service's one addition to docs/api.md's table (docs/service.md)
  method_not_allowed: {
    exit: 1,
    meaning: 'The service serves this path, but not with this HTTP method (HTTP 405; the `Allow` header lists the methods it serves).',
    action: 'Check `target.dialect` (v1Prefix, v2Prefix) against your service; if it matches, report it with KBSYNC_DEBUG=1 output.',
  },
  network: {
    exit: 1,
    meaning: 'The service could not be reached (DNS, connection refused or reset).',
    action: 'Check `target.baseUrl` and your network, then run again.',
  },
  timeout: {
    exit: 1,
    meaning: 'The service did not answer in time.',
    action: 'Run again; a paid call whose answer was lost is checked against the remote listing first.',
  },
  non_json_response: {
    exit: 1,
    meaning: 'The service answered with something other than JSON (often an HTML page: wrong URL, prefix or key).',
    action: 'Check `target.baseUrl`, `target.dialect.v1Prefix`/`v2Prefix` and the key.',
  },
  unknown_outcome: {
    exit: 1,
    meaning:
      'A paid call was sent but its answer does not say what happened: lost (timeout, reset, crash), a 5xx, a 409 idempotency_in_progress, or a success whose body cannot be read.',
    action: 'Run again: kbsync checks the remote file listing before paying a second time.',
  },
  unexpected_response: {
    exit: 1,
    meaning: 'The service answered JSON in a shape kbsync does not understand.',
    action: 'Check `target.dialect`; if it matches your service, report it with KBSYNC_DEBUG=1 output.',
  },
  // sync side
  state_locked: {
    exit: 2,
    meaning:
      'Another kbsync process is using the same state database; on a shared PostgreSQL state, another runner is syncing a source of the same name.',
    action:
      'Follow the message, which names the holder (command, pid, host, since) and the two ways on. Never give a run another `state` for the same dataset: it would upload the same files again. On a shared PostgreSQL state, runners whose sources have distinct names run side by side.',
  },
  state_corrupt: {
    exit: 2,
    meaning: 'The state database cannot be read.',
    action: 'Move the state file away and run again: kbsync rebuilds it from the remote file listing without re-uploading.',
  },
  state_unavailable: {
    exit: 2,
    meaning:
      'The `state` path cannot hold the state database: a folder, a file in the way, no permission, a read-only or full disk; or the PostgreSQL server of a `postgres://` state cannot be reached or refuses the login, or the connection to it was lost (`kbsync watch` then stops: its source locks went with the session).',
    action:
      'Point `state` at a file path kbsync may create and write (for example `.kbsync/state.db`; its folder is made 0700), or check the host, port, user, password and database of the `postgres://` URL; run `kbsync watch` under a supervisor that restarts it.',
  },
  state_write_failed: {
    exit: 1,
    meaning:
      'The state database could not be written during the run: the disk is full or became read-only. No paid call is made without its record.',
    action:
      'Free some space (or remount the disk writable) and run again: a call whose outcome was not recorded is checked against the remote listing before any retry.',
  },
  state_version: {
    exit: 2,
    meaning: 'The state database was written by a newer kbsync.',
    action: 'Upgrade kbsync. (Another `state` for the same dataset is no way out: it would upload every file again.)',
  },
  state_conflict: {
    exit: 5,
    meaning: 'An operation in the state database was not in the step kbsync expected: a bug.',
    action: 'Please report it with KBSYNC_DEBUG=1 output; running again is safe.',
  },
  source_unavailable: {
    exit: 1,
    meaning: 'A source folder or checkout disappeared or became unreadable during the run.',
    action: 'Check the source path and its permissions, then run again.',
  },
  git_failed: {
    exit: 1,
    meaning: 'A git clone, fetch or checkout failed, or git is not installed (the message then says so).',
    action:
      'Install git if the message says it is missing; otherwise check `sources[].git.url`, `ref` and your git credentials; run with KBSYNC_DEBUG=1 for git output.',
  },
  budget_exhausted: {
    exit: 3,
    meaning: 'The credit budget (per run, day or month) stopped the run with work left.',
    action: 'Raise `budget.*` or wait for the next period; the remaining work stays queued, smallest first.',
  },
  file_changed: {
    exit: 3,
    meaning: 'A file changed between the moment kbsync hashed it and its upload; it was not sent.',
    action: 'Nothing to fix: the next run hashes it again and uploads what it then holds.',
  },
  // local service: ingest and chat
  parse_failed: {
    exit: 1,
    meaning: 'The local service could not read a file of a supported type (damaged or not what its extension says).',
    action: 'Open the file to check it; kbsync lists it as failed and retries it only when it changes.',
  },
  llm_failed: {
    exit: 1,
    meaning: "The local service's answer model (the configured LLM endpoint) failed.",
    action: 'Check the LLM endpoint the service was started with, or run again.',
  },
  embeddings_failed: {
    exit: 1,
    meaning: "The local service's embeddings provider (the configured /embeddings endpoint) failed or answered something unusable.",
    action: 'Check the embeddings URL, model and key the service was started with, or run again.',
  },
  // anything unexpected
  internal_error: {
    exit: 5,
    meaning: 'An error kbsync did not expect (printed as `kbsync: internal error: MESSAGE`).',
    action: 'This is a bug in kbsync; please report it, with the output of the same command run with KBSYNC_DEBUG=1.',
  },
};
