import { ERROR_TABLE } from './error-table.js';

const HEADER = `# Errors and exit codes

<!-- Generated from src/cli/error-table.ts by src/cli/errors-reference.ts: do not edit by hand.
     Regenerate with: KBSYNC_UPDATE_DOCS=1 npx vitest run test/cli/docs.test.ts -->

Every error kbsync raises on purpose has a stable code. kbsync prints \`kbsync: MESSAGE\` and a
hint on stderr; with \`--json\` a command also prints \`{"error": {"code", "exitCode", "message"}}\`
on stdout (plus \`file\` and \`problems\` for config errors). Set \`KBSYNC_DEBUG=1\` to see the stack
and the chain of causes. API keys never appear in any message.

## Exit codes

| exit | meaning |
|---|---|
| 0 | Done, or nothing to do. |
| 1 | Some items failed (or the one operation of the command failed); the rest was done. |
| 2 | Usage or config error: unknown command or option, bad argument, config problems. Nothing was done. |
| 3 | Stopped by the budget or a limit with work left (including a 429 \`Retry-After\` longer than \`upload.maxRetryAfterSeconds\`); the rest stays queued for the next run. |
| 4 | The remote refused us: bad key, credits exhausted on the server, plan tier, a rate limit retries did not get past. After a refusal for credits or rate, the files not sent are deferred (not failed) and the next run sends them. |
| 5 | Internal error: a bug in kbsync. It prints a short message; \`KBSYNC_DEBUG=1\` adds the stack. Please report it. |

Per-file outcomes (too large, unsupported, over budget...) are not errors: \`kbsync plan\` and
\`kbsync sync\` list them with their reasons, and only decide the exit code (1 or 3) at the end.

A 429 is a refusal, never charged: the calls to that endpoint (its method and route, e.g.
\`POST /files/upload\` for every upload, \`POST /files/{id}/reprocess\` for every reprocess) pause until
its \`Retry-After\` has passed; calls already sent finish, no other starts, and the refused call is sent
again after the pause (up to 3 times). A \`Retry-After\` longer than \`upload.maxRetryAfterSeconds\`
(60 s by default) stops the run instead (exit 3), with the rest queued for the next run.

## Config problems

\`config_invalid\` lists every problem at once, one per line, as \`FILE:LINE: PATH: MESSAGE\`:

\`\`\`
kbsync.yaml:6: target.dialect.authHeadr: unknown key (did you mean "authHeader"?)
kbsync.yaml:14: sources[1].path: no such directory (looked for /home/me/kb/missing)
\`\`\`

## Error codes

`;

/** The markdown of docs/errors.md: every error code with its meaning, what to do, and its exit code. */
export function renderErrorsReference(): string {
  const rows = Object.entries(ERROR_TABLE).map(
    ([code, info]) => `| \`${code}\` | ${escapeCell(info.meaning)} | ${escapeCell(info.action)} | ${info.exit} |`,
  );
  return `${HEADER}| code | meaning | what to do | exit |\n|---|---|---|---|\n${rows.join('\n')}\n`;
}

function escapeCell(text: string): string {
  return text.replaceAll('|', '\\|');
}
