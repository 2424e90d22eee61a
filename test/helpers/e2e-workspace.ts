import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { silentLogger } from '../../src/shared/logger.js';
import type { PlanAction, PlanTotals } from '../../src/sync/types.js';

/** What kbsync.yaml holds in a workspace; each section is merged over the defaults below. */
export type WorkspaceConfig = {
  target: Record<string, unknown>;
  state?: string;
  budget?: Record<string, unknown>;
  sources?: Record<string, unknown>[];
  upload?: Record<string, unknown>;
  limits?: Record<string, unknown>;
  reindex?: Record<string, unknown>;
  watch?: Record<string, unknown>;
  convert?: string[];
};

/** One item of a `--json` report: the five agreed fields, and what else the report carries. */
export type JsonItem = { source: string; path: string; action: PlanAction; reason: string; credits: number } & Record<string, unknown>;
export type JsonReport = { summary: PlanTotals; items: JsonItem[] };

export type CliRun = { code: number; stdout: string; stderr: string };

/** A temp folder with a kbsync.yaml (remote target), a `docs/` source folder and kbsync run in-process. */
export type Workspace = {
  root: string;
  /** The folder source's root. */
  docs: string;
  configPath: string;
  statePath: string;
  /** Writes a file under docs/ (folders created). */
  write(path: string, content: string | Buffer): void;
  remove(path: string): void;
  move(from: string, to: string): void;
  /** Rewrites kbsync.yaml: each given section replaces the current one. */
  configure(patch: Partial<WorkspaceConfig>): void;
  /** Runs `kbsync ARGS -c kbsync.yaml` in-process with captured output. */
  run(...args: string[]): Promise<CliRun>;
  /** Runs `kbsync ARGS --json -c kbsync.yaml` and parses stdout. */
  runJson(...args: string[]): Promise<CliRun & { report: JsonReport }>;
};

/** Makes temp folders and removes them all at once (call `cleanup` in afterAll). */
export function createTempDirs(): { make(prefix?: string): string; cleanup(): void } {
  const made: string[] = [];
  return {
    make: (prefix = 'kbsync-e2e-') => {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    cleanup: () => {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Defaults for the tests: fast pacing (the service runs without a rate limit), a generous budget. */
const DEFAULTS = {
  state: '.kbsync/state.db',
  budget: { maxCreditsPerRun: 100_000, maxCreditsPerDay: 100_000, maxCreditsPerMonth: 100_000 },
  sources: [{ name: 'docs', path: './docs' }],
  upload: { concurrency: 4, requestsPerSecond: 1000 },
};

/** A workspace in `root` whose config targets `baseUrl` with `apiKey`. */
export function createWorkspace(
  root: string,
  o: { baseUrl: string; apiKey: string; plan?: string; config?: Partial<WorkspaceConfig> },
): Workspace {
  const docs = join(root, 'docs');
  mkdirSync(docs, { recursive: true });
  const configPath = join(root, 'kbsync.yaml');
  let config: WorkspaceConfig = {
    ...DEFAULTS,
    target: { kind: 'remote', baseUrl: o.baseUrl, apiKey: o.apiKey, plan: o.plan ?? 'basic' },
    ...o.config,
  };
  // JSON is YAML: the loader reads it as the user's YAML.
  const save = (): void => writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
  save();
  const abs = (path: string): string => join(docs, path);
  const run = (args: string[]): Promise<CliRun> => runKbsync([...args, '-c', configPath], root);
  return {
    root,
    docs,
    configPath,
    statePath: join(root, config.state ?? DEFAULTS.state),
    write(path, content) {
      mkdirSync(dirname(abs(path)), { recursive: true });
      writeFileSync(abs(path), content);
    },
    remove: (path) => rmSync(abs(path)),
    move(from, to) {
      mkdirSync(dirname(abs(to)), { recursive: true });
      renameSync(abs(from), abs(to));
    },
    configure(patch) {
      config = { ...config, ...patch };
      save();
    },
    run: (...args) => run(args),
    async runJson(...args) {
      const result = await run([...args, '--json']);
      let report: JsonReport;
      try {
        report = JSON.parse(result.stdout) as JsonReport;
      } catch {
        throw new Error(`kbsync ${args.join(' ')} --json printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
      }
      return { ...result, report };
    },
  };
}

/** Runs `kbsync ...args` in-process (main() of src/cli), output captured, in `cwd`, with an empty env; `tty` makes stderr a terminal. */
export async function runKbsync(args: string[], cwd: string, o: { env?: Record<string, string>; tty?: boolean } = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(['node', 'kbsync', ...args], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text), isTTY: o.tty === true },
    env: o.env ?? {},
    cwd,
    getLogger: () => Promise.resolve(silentLogger()),
  });
  return { code, stdout, stderr };
}

/** The items of a report with a given action, as `path` strings (sorted). */
export function pathsWith(report: JsonReport, action: PlanAction): string[] {
  return report.items
    .filter((i) => i.action === action)
    .map((i) => i.path)
    .sort();
}

/** The one item of a report for `path` (throws when there is none or several). */
export function itemOf(report: JsonReport, path: string): JsonItem {
  const found = report.items.filter((i) => i.path === path);
  if (found.length !== 1)
    throw new Error(`expected one item for ${path}, found ${found.length}: ${JSON.stringify(report.items.map((i) => i.path))}`);
  return found[0] as JsonItem;
}
