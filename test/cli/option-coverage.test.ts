import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../src/cli/context.js';
import { buildProgram } from '../../src/cli/program.js';
import { REPO_ROOT } from '../helpers/build-dist.js';
import { runCli, useTempDirs } from './helpers.js';

/**
 * Every option of every command has a test that fails when the option is ignored (issue 15): a test
 * that reads back what the option changes (the folder, the file, the output, the exit code, the request
 * the server received). The options are collected from the real program (buildProgram()), for each
 * command that runs an action, with the options of the commands above it (`-c` of kbsync, `--data` of
 * `serve`): a new option, or a new command, fails this file until COVERAGE names its test.
 *
 * Each entry names a test by file and title; the check below finds that title in the file and the
 * option's flag (as a quoted literal: '--all', '-c') in that test's own code. Whether the test fails when
 * the option is ignored was checked by breaking the code (see the report of the change that added
 * this file); a test named here must keep reading the option's effect back.
 */

type Cover = { file: string; test: string };

const E2E = 'test/cli/e2e/commands-e2e.test.ts';
const CONFIG_CMDS = 'test/cli/config-commands.test.ts';
const OPTIONS = 'test/cli/options.test.ts';
const SERVE = 'test/service/serve-cli.test.ts';
const SERVE_PARSE = 'test/service/serve-parse-limits.test.ts';
const WAIT = 'test/sync/runs/wait.test.ts';
const THIS = 'test/cli/option-coverage.test.ts';
const WATCH = 'test/watch/e2e/watch.test.ts';
const MIGRATE = 'test/sync/runs/pg-migrate.test.ts';
const MIGRATE_TEST = 'moves a state file to PostgreSQL and back, every row read back the same; syncing goes on without paying again';
const AGENTS = 'test/cli/agents.test.ts';
const CHECK = 'test/sync/e2e/check.test.ts';
const AUDIT = 'test/sync/e2e/audit.test.ts';
const CI_REPORTS = 'test/sync/e2e/ci-reports.test.ts';
const CHECK_AUDIT_REPORTS = 'test/sync/runs/check-audit-reports.test.ts';

const VERSION: Cover = { file: THIS, test: '%s --version prints the version in package.json and does nothing else' };
const SERVE_REFUSES: Cover = { file: SERVE, test: '%j: an option the command would ignore is refused (exit 2), and nothing is written' };
const JSON_REPORTS: Cover = {
  file: OPTIONS,
  test: 'plan --json, sync --json and status --json each print one JSON document; without --json, text',
};
const ALL: Cover = {
  file: OPTIONS,
  test: 'plan --all and sync --all list unchanged files and each unsupported file past 50; without it they are counted',
};
const SYNC_CI_REPORTS: Cover = {
  file: CI_REPORTS,
  test: 'sync --report-md FILE --junit FILE: the Markdown has the counts, credits, failures and skipped files with their reasons; the JUnit one case per file action, valid against the schema',
};
const CHECK_CI_REPORTS: Cover = {
  file: CHECK_AUDIT_REPORTS,
  test: 'check --report-md FILE --junit FILE: one JUnit case per check, a failing check a failed case with the ranks found and what came back instead; the Markdown has the counts and credits, and is appended to $GITHUB_STEP_SUMMARY',
};
const AUDIT_CI_REPORTS: Cover = {
  file: CHECK_AUDIT_REPORTS,
  test: 'audit --report-md FILE --junit FILE: each finding a failed case in a suite per drift kind; the Markdown counts the findings and spends no credit',
};
const DATASET_CREATE: Cover = { file: SERVE, test: 'dataset create --json and credits add work on the data folder without a server' };
const CREDITS_ADD: Cover = { file: SERVE, test: 'credits add with --data %s adds to the named dataset of that folder, and to no other' };
const AGENTS_CONFIG_FILE: Cover = {
  file: AGENTS,
  test: 'agents list, create, show, config and datasets -c FILE: work on the target and state of FILE, from another folder',
};
const AGENT_CREATE: Cover = {
  file: AGENTS,
  test: 'agents create NAME with --system-prompt, --temperature, --top-k and --set: the service holds that config; 5 credits, recorded first',
};
const AGENT_CONFIG: Cover = {
  file: AGENTS,
  test: 'agents config NAME --temperature --top-k --set --unset, --system-prompt, --system-prompt-file: changes those keys, keeps the others; 2 credits each; a no-op is not sent',
};
const AGENT_LIST_SHOW: Cover = { file: AGENTS, test: 'agents list --json and agents show NAME --json: what the service holds, free' };
const AGENT_DATASETS: Cover = {
  file: AGENTS,
  test: 'agents datasets NAME: attach --mode self_learning, mode read_only, list --json; free',
};

/** "<command> <option>" → the test that fails when the command ignores the option. */
const COVERAGE: Record<string, Cover> = {
  'audit --json': {
    file: AUDIT,
    test: 'reports a hand-uploaded file, a deleted source file, a stale copy, a changed-but-not-synced file and a failed file; free (GETs only); exit 1 only with --fail-on-drift',
  },
  'audit --fail-on-drift': {
    file: AUDIT,
    test: 'reports a hand-uploaded file, a deleted source file, a stale copy, a changed-but-not-synced file and a failed file; free (GETs only); exit 1 only with --fail-on-drift',
  },
  'audit --config': {
    file: AUDIT,
    test: 'an audit of a dataset in step finds nothing: exit 0 with --fail-on-drift too (built CLI, from the workspace folder)',
  },
  'audit --version': VERSION,
  'audit --report-md': AUDIT_CI_REPORTS,
  'audit --junit': AUDIT_CI_REPORTS,

  'agents list --json': AGENT_LIST_SHOW,
  'agents list --config': AGENTS_CONFIG_FILE,
  'agents list --version': VERSION,
  'agents create --system-prompt': AGENT_CREATE,
  'agents create --system-prompt-file': {
    file: AGENTS,
    test: 'agents create NAME --system-prompt-file FILE: the prompt is the text of FILE',
  },
  'agents create --temperature': AGENT_CREATE,
  'agents create --top-k': AGENT_CREATE,
  'agents create --set': AGENT_CREATE,
  'agents create --json': AGENT_CREATE,
  'agents create --config': AGENTS_CONFIG_FILE,
  'agents create --version': VERSION,
  'agents show --json': AGENT_LIST_SHOW,
  'agents show --config': AGENTS_CONFIG_FILE,
  'agents show --version': VERSION,
  'agents config --system-prompt': AGENT_CONFIG,
  'agents config --system-prompt-file': AGENT_CONFIG,
  'agents config --temperature': AGENT_CONFIG,
  'agents config --top-k': AGENT_CONFIG,
  'agents config --set': AGENT_CONFIG,
  'agents config --unset': AGENT_CONFIG,
  'agents config --json': AGENT_CONFIG,
  'agents config --config': AGENTS_CONFIG_FILE,
  'agents config --version': VERSION,
  'agents datasets --mode': AGENT_DATASETS,
  'agents datasets --json': AGENT_DATASETS,
  'agents datasets --config': AGENTS_CONFIG_FILE,
  'agents datasets --version': VERSION,

  'chat --json': { file: E2E, test: 'chat --json: {"response", "agent", "sources"}, 1 credit' },
  'chat --config': { file: E2E, test: 'chat AGENT TEXT: exit 0, an answer from the handbook with its sources, 1 credit' },
  'chat --version': VERSION,

  'check --questions': { file: CHECK, test: 'the built CLI, from the workspace folder: exit 0 when every check passes, 1 when one fails' },
  'check --top-k': {
    file: CHECK,
    test: 'on an Advanced-tier plan the questions go as batch queries, one per top k (1 credit per question)',
  },
  'check --json': {
    file: CHECK,
    test: 'checks that pass exit 0 with the ranks found, one query (1 credit) each on a basic plan, recorded in the ledger; after a doc is removed and re-synced its check fails (exit 1)',
  },
  'check --config': { file: CHECK, test: 'the built CLI, from the workspace folder: exit 0 when every check passes, 1 when one fails' },
  'check --version': VERSION,
  'check --report-md': CHECK_CI_REPORTS,
  'check --junit': CHECK_CI_REPORTS,

  'config check --json': { file: CONFIG_CMDS, test: 'prints the resolved config as JSON with --json, secrets redacted' },
  'config check --config': { file: OPTIONS, test: 'config check -c FILE: checks and prints FILE, resolved' },
  'config check --version': VERSION,

  'explain --json': { file: E2E, test: 'a secret-looking file (.env) is skipped without being read: no hash, nothing of its content' },
  'explain --config': { file: OPTIONS, test: 'explain -c FILE PATH: explains a file of the sources of FILE' },
  'explain --version': VERSION,

  'init --force': { file: CONFIG_CMDS, test: 'refuses to overwrite without --force, and overwrites with it' },
  'init --config': { file: CONFIG_CMDS, test: 'writes to -c FILE, creating its folder, and leaves an existing docs folder alone' },
  'init --version': VERSION,

  'plan --json': JSON_REPORTS,
  'plan --all': ALL,
  'plan --config': { file: OPTIONS, test: 'plan -c FILE --json: plans the sources of FILE' },
  'plan --no-daemon': {
    file: 'test/watch/e2e/watch-beside.test.ts',
    test: 'plan is answered by the daemon (the same report, --json and exit code as a plan that reads the state), a change of a moment ago included',
  },
  'plan --version': VERSION,

  'query --top-k': {
    file: E2E,
    test: 'query TEXT --top-k 3: exit 0, three ranked results from the handbook with where each came from, 1 credit',
  },
  'query --json': {
    file: E2E,
    test: 'query --json: {"results": [{text, score, knowledgeSourceId, chunkIndex, source, path, origin}]}, best first, 1 credit',
  },
  'query --config': {
    file: E2E,
    test: 'query TEXT --top-k 3: exit 0, three ranked results from the handbook with where each came from, 1 credit',
  },
  'query --version': VERSION,

  'serve --host': { file: SERVE, test: '--host 127.0.0.2 listens there, and not on the default 127.0.0.1' },
  'serve --port': { file: SERVE, test: '--port N listens on N' },
  'serve --data': { file: SERVE, test: '--data DIR: the first start creates DIR/service.db (and nothing in the default folder)' },
  'serve --allow-insecure-webhooks': {
    file: SERVE,
    test: '--allow-insecure-webhooks: an http://127.0.0.1 webhook URL is accepted with it, refused (422) without it',
  },
  'serve --rate-limit': {
    file: SERVE,
    test: '--rate-limit 2/min: the third request of a key within the minute is answered 429 with Retry-After',
  },
  'serve --llm-url': { file: SERVE, test: '--llm-url URL: agent chat answers come from that OpenAI-compatible server' },
  'serve --max-file-mb': { file: SERVE, test: 'serves with the given limit: basic=1 takes 1 MiB and refuses 1 MiB + 1 byte with 413' },
  'serve --parse-time-limit': {
    file: SERVE_PARSE,
    test: '--parse-time-limit 1 --parse-workers 1: a long parse fails naming 1 s, and the file after it waited for the one worker',
  },
  'serve --parse-workers': {
    file: SERVE_PARSE,
    test: '--parse-time-limit 1 --parse-workers 1: a long parse fails naming 1 s, and the file after it waited for the one worker',
  },
  'serve --parse-memory-limit': { file: SERVE_PARSE, test: '--parse-memory-limit 64: a parse past 64 MB fails naming the limit' },
  'serve --config': SERVE_REFUSES,
  'serve --version': VERSION,

  'serve dataset create --name': DATASET_CREATE,
  'serve dataset create --plan': DATASET_CREATE,
  'serve dataset create --credits': DATASET_CREATE,
  'serve dataset create --json': DATASET_CREATE,
  'serve dataset create --data': {
    file: SERVE,
    test: 'dataset create with --data %s writes into that folder; a server on it takes the key with the name, plan and credits asked',
  },
  // serve's own options would be ignored by its subcommands: refused instead.
  'serve dataset create --host': SERVE_REFUSES,
  'serve dataset create --port': SERVE_REFUSES,
  'serve dataset create --allow-insecure-webhooks': SERVE_REFUSES,
  'serve dataset create --rate-limit': SERVE_REFUSES,
  'serve dataset create --llm-url': SERVE_REFUSES,
  'serve dataset create --max-file-mb': SERVE_REFUSES,
  'serve dataset create --parse-time-limit': SERVE_REFUSES,
  'serve dataset create --parse-memory-limit': SERVE_REFUSES,
  'serve dataset create --parse-workers': SERVE_REFUSES,
  'serve dataset create --config': SERVE_REFUSES,
  'serve dataset create --version': VERSION,

  'serve credits add --dataset': CREDITS_ADD,
  'serve credits add --json': CREDITS_ADD,
  'serve credits add --data': CREDITS_ADD,
  'serve credits add --host': SERVE_REFUSES,
  'serve credits add --port': SERVE_REFUSES,
  'serve credits add --allow-insecure-webhooks': SERVE_REFUSES,
  'serve credits add --rate-limit': SERVE_REFUSES,
  'serve credits add --llm-url': SERVE_REFUSES,
  'serve credits add --max-file-mb': SERVE_REFUSES,
  'serve credits add --parse-time-limit': SERVE_REFUSES,
  'serve credits add --parse-memory-limit': SERVE_REFUSES,
  'serve credits add --parse-workers': SERVE_REFUSES,
  'serve credits add --config': SERVE_REFUSES,
  'serve credits add --version': VERSION,

  'status --json': JSON_REPORTS,
  'status --config': { file: OPTIONS, test: 'status -c FILE --json: the files tracked by the state of FILE' },
  'status --version': VERSION,

  'sync --json': JSON_REPORTS,
  'sync --all': ALL,
  'sync --wait': {
    file: WAIT,
    test: "waits until processed; a file failed with an error of no known code (the hosted service's) is reprocessed maxReprocessAttempts times, then reported failed",
  },
  'sync --wait-timeout': {
    file: WAIT,
    test: '--wait-timeout passes with a file still processing: the run says which, and exits 3; the file is not reported failed',
  },
  'sync --report-md': SYNC_CI_REPORTS,
  'sync --junit': SYNC_CI_REPORTS,
  'sync --config': { file: OPTIONS, test: 'sync -c FILE --json: syncs the sources of FILE into its target, with its state next to FILE' },
  'sync --version': VERSION,

  'watch --http': {
    file: WATCH,
    test: "--http: /healthz, /readyz after the first sync, /metrics with the run's values; kbsync status shows the running daemon",
  },
  'watch --config': { file: WATCH, test: 'finds at start what changed while it was stopped' },
  'watch --version': VERSION,

  'state migrate --to': { file: MIGRATE, test: MIGRATE_TEST },
  'state migrate --json': { file: MIGRATE, test: MIGRATE_TEST },
  'state migrate --config': { file: MIGRATE, test: MIGRATE_TEST },
  'state migrate --version': VERSION,
};

/** Every command that runs an action, as its words after `kbsync`, with the options it accepts (its own and its parents'). */
function commandsAndOptions(): { path: string; options: readonly Option[] }[] {
  const program = buildProgram(createContext({ stdout: { write: () => true }, stderr: { write: () => true }, env: {} }));
  const found: { path: string; options: readonly Option[] }[] = [];
  const visit = (cmd: Command, words: string[], inherited: readonly Option[]): void => {
    const options = [...inherited, ...cmd.options];
    // Commander keeps the action private; `serve` has one and subcommands too.
    const acts = (cmd as unknown as { _actionHandler: unknown })._actionHandler !== null;
    if (acts) found.push({ path: words.join(' '), options });
    for (const sub of cmd.commands) visit(sub, [...words, sub.name()], options);
  };
  visit(program, [], []);
  return found;
}

/** The code of the test titled `title` in `file`: from its `it(` or `it.each(` to the next test or describe. */
function testCode(file: string, title: string): string | undefined {
  // Titles are compared as written in the source, with \' as '.
  const source = readFileSync(join(REPO_ROOT, file), 'utf8').replaceAll("\\'", "'");
  // As the argument of it( or of it.each(...)( (not as a value in COVERAGE above), in any quotes, on the
  // same line or the next (as the formatter leaves a long title).
  const escaped = title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const at = new RegExp(`\\(\\s*(['"\`])${escaped}\\1`).exec(source)?.index;
  if (at === undefined) return undefined;
  const starts = [...source.slice(0, at).matchAll(/\n\s*it(\.each)?\(/g)];
  const start = starts.at(-1)?.index ?? at;
  const next = /\n\s*(it(\.each)?|describe)\(/.exec(source.slice(at));
  return source.slice(start, next === null ? undefined : at + next.index);
}

const keyOf = (path: string, option: Option): string => `${path} ${option.long ?? option.flags}`;

describe('every option of every command has a test that reads back its effect', () => {
  const commands = commandsAndOptions();

  it('the program has the commands and options this table was written for, and COVERAGE names a test for each', () => {
    const keys = commands.flatMap(({ path, options }) => options.map((o) => keyOf(path, o)));

    expect(commands.map((c) => c.path).sort()).toEqual([
      'agents config',
      'agents create',
      'agents datasets',
      'agents list',
      'agents show',
      'audit',
      'chat',
      'check',
      'config check',
      'explain',
      'init',
      'plan',
      'query',
      'serve',
      'serve credits add',
      'serve dataset create',
      'state migrate',
      'status',
      'sync',
      'watch',
    ]);
    expect(keys.filter((k) => COVERAGE[k] === undefined)).toEqual([]);
    expect(Object.keys(COVERAGE).filter((k) => !keys.includes(k))).toEqual([]);
  });

  it.each(commands.flatMap(({ path, options }) => options.map((o) => [keyOf(path, o), o] as const)))(
    '%s: its test exists and uses the option',
    (key, option) => {
      const cover = COVERAGE[key];
      expect(cover, `no test named for ${key}`).toBeDefined();
      if (cover === undefined) return;
      expect(existsSync(join(REPO_ROOT, cover.file)), cover.file).toBe(true);
      const code = testCode(cover.file, cover.test);
      expect(code, `${cover.file} has no test titled "${cover.test}"`).toBeDefined();
      const flags = [option.long, option.short].filter((f): f is string => f !== undefined);
      expect(
        flags.some((flag) => code?.includes(`'${flag}'`)),
        `"${cover.test}" never passes ${flags.join(' or ')}`,
      ).toBe(true);
    },
  );
});

describe('--version (commander acts on it wherever it stands)', () => {
  const tempDir = useTempDirs();
  const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

  it.each([
    [['agents', 'list']],
    [['agents', 'create', 'x']],
    [['agents', 'show', 'x']],
    [['agents', 'config', 'x', '--top-k', '2']],
    [['agents', 'datasets', 'x', 'attach']],
    [['audit']],
    [['chat', 'agent', 'text']],
    [['check', '--questions', 'checks.yaml']],
    [['config', 'check']],
    [['explain', 'x.md']],
    [['init']],
    [['plan']],
    [['query', 'text']],
    [['serve']],
    [['serve', 'credits', 'add', '--dataset', '1', '5']],
    [['serve', 'dataset', 'create', '--name', 'x']],
    [['state', 'migrate', '--to', 'x.db']],
    [['status']],
    [['sync']],
    [['watch']],
  ])('%s --version prints the version in package.json and does nothing else', async (args) => {
    const dir = tempDir();

    const run = await runCli([...args, '--version'], { cwd: dir });

    expect(run).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(existsSync(join(dir, 'kbsync.yaml'))).toBe(false);
    expect(existsSync(join(dir, '.kbsync'))).toBe(false);
  });
});
