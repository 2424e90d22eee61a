import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { junitSchemaErrors, parseJunit, parseMarkdown } from '../helpers/ci-reports.js';
import { runCli, useTempDirs } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('the bundled example configs', () => {
  const tempDir = useTempDirs();

  it.each([['examples/kbsync.yaml'], ['sync.config.example.yaml']])('%s passes kbsync config check', async (file) => {
    const run = await runCli(['config', 'check', '-c', file], { cwd: ROOT });

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });

  it('examples/kbsync.yaml keeps its state and service data under examples/.kbsync and leaves drafts out', async () => {
    const run = await runCli(['config', 'check', '-c', 'examples/kbsync.yaml'], { cwd: ROOT });

    const config = parse(run.stdout) as {
      state: string;
      target: { kind: string; dataDir: string };
      sources: { path: string; exclude: string[] }[];
    };
    expect(config.target.kind).toBe('embedded');
    expect(config.state).toBe(`${ROOT}examples/.kbsync/state.db`);
    expect(config.target.dataDir).toBe(`${ROOT}examples/.kbsync/service`);
    expect(config.sources).toMatchObject([{ path: `${ROOT}examples/docs`, exclude: ['drafts/**'] }]);
  });

  it('examples/kbsync.yaml converts the handbook’s own PDF and PowerPoint deck, and leaves its RTF out', async () => {
    const dir = tempDir();
    cpSync(join(ROOT, 'examples/docs'), join(dir, 'docs'), { recursive: true });
    cpSync(join(ROOT, 'examples/kbsync.yaml'), join(dir, 'kbsync.yaml'));

    const run = await runCli(['plan', '--json'], { cwd: dir });

    const items = (JSON.parse(run.stdout) as { items: { path: string; action: string; reason: string; remoteName: string }[] }).items;
    const item = (path: string) => items.find((i) => i.path === path);
    expect(item('policies/security-guide.pdf')).toMatchObject({ action: 'upload', remoteName: 'policies/security-guide.pdf.md' });
    expect(item('policies/security-guide.pdf')?.reason).toMatch(/converted from PDF \(1 page/);
    expect(item('all-hands.pptx')).toMatchObject({ action: 'upload', remoteName: 'all-hands.pptx.md' });
    expect(item('all-hands.pptx')?.reason).toMatch(/converted from PowerPoint \(4 slides/);
    expect(item('notes.rtf')).toMatchObject({ action: 'skip:unsupported' });
  });
});

type Step = { name?: string; run?: string; uses?: string; if?: string; shell?: string };
type Workflow = { on: { push: { paths: string[] } }; jobs: Record<string, { steps: Step[]; env?: Record<string, string> }> };

/** The words of a one-line shell command: '…' and "…" quoted words kept whole, $VAR expanded from `env`. */
function shellWords(line: string, env: Record<string, string>): string[] {
  return [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) =>
    m[2] !== undefined ? m[2] : (m[1] ?? m[3] ?? '').replace(/\$(\w+)/g, (_, name: string) => env[name] ?? ''),
  );
}

describe('the GitHub Actions example (examples/github-actions)', () => {
  const tempDir = useTempDirs();
  const workflow = parse(readFileSync(join(ROOT, 'examples/github-actions/kbsync-sync.yml'), 'utf8')) as Workflow;
  const steps = workflow.jobs['docs-as-kb']?.steps ?? [];
  const syncAt = steps.findIndex((s) => s.run?.startsWith('npx kbsync sync ') === true);
  const checkAt = steps.findIndex((s) => s.run?.includes('npx kbsync check --questions checks.yaml') === true);

  it('has a docs-as-kb job: sync with the Markdown report into the step summary and a JUnit file, then check, with its report in the summary too', () => {
    expect(syncAt).toBeGreaterThan(-1);
    expect(checkAt).toBeGreaterThan(syncAt);
    expect(steps[syncAt]?.run).toContain('--report-md "$GITHUB_STEP_SUMMARY"');
    expect(steps[syncAt]?.run).toMatch(/--junit reports\/\S+\.xml/);
    // The JUnit file is kept, and the check runs, whatever the sync's exit code.
    const upload = steps.find((s) => s.uses?.startsWith('actions/upload-artifact@') === true);
    expect(upload?.if).toBe('${{ !cancelled() }}');
    expect(steps[checkAt]?.if).toBe('${{ !cancelled() }}');
    expect(steps[checkAt]?.run).toContain('--report-md "$GITHUB_STEP_SUMMARY"');
    expect(steps[checkAt]?.run).toMatch(/--junit reports\/\S+\.xml/);
    // The artifact step comes last: it keeps the check's JUnit report too.
    expect(steps.findIndex((s) => s === upload)).toBeGreaterThan(checkAt);
    expect(workflow.jobs['docs-as-kb']?.env?.KBSYNC_API_KEY).toBe('${{ secrets.KBSYNC_API_KEY }}');
    expect(workflow.on.push.paths).toContain('checks.yaml');
  });

  it('its sync step, run as written on the example handbook, writes the step summary and a schema-valid JUnit report', async () => {
    const dir = tempDir();
    cpSync(join(ROOT, 'examples/docs'), join(dir, 'docs'), { recursive: true });
    cpSync(join(ROOT, 'examples/kbsync.yaml'), join(dir, 'kbsync.yaml'));
    const summary = join(dir, 'step-summary.md');
    writeFileSync(summary, '');
    const words = shellWords(steps[syncAt]?.run ?? '', { GITHUB_STEP_SUMMARY: summary });
    expect(words.slice(0, 3)).toEqual(['npx', 'kbsync', 'sync']);

    const run = await runCli(words.slice(2), { cwd: dir, env: { GITHUB_STEP_SUMMARY: summary } });

    expect(run.code).toBe(0);
    const md = parseMarkdown(readFileSync(summary, 'utf8'));
    expect(md.headings).toEqual(['kbsync sync', 'Skipped (2)']);
    const junitPath = join(dir, words[words.indexOf('--junit') + 1] ?? '');
    const xml = readFileSync(junitPath, 'utf8');
    expect(await junitSchemaErrors(xml)).toEqual([]);
    expect(parseJunit(xml).cases.filter((c) => c.outcome === 'passed').length).toBe(12);
  });

  it('its check step, run as written after the sync step on the example handbook, passes every check of checks.yaml and adds its report to the step summary', async () => {
    const dir = tempDir();
    cpSync(join(ROOT, 'examples/docs'), join(dir, 'docs'), { recursive: true });
    cpSync(join(ROOT, 'examples/kbsync.yaml'), join(dir, 'kbsync.yaml'));
    cpSync(join(ROOT, 'examples/github-actions/checks.yaml'), join(dir, 'checks.yaml'));
    const summary = join(dir, 'step-summary.md');
    writeFileSync(summary, '');
    const sync = await runCli(shellWords(steps[syncAt]?.run ?? '', { GITHUB_STEP_SUMMARY: summary }).slice(2), {
      cwd: dir,
      env: { GITHUB_STEP_SUMMARY: summary },
    });
    expect(sync.code).toBe(0);
    const words = shellWords(steps[checkAt]?.run ?? '', { GITHUB_STEP_SUMMARY: summary });
    expect(words.slice(0, 5)).toEqual(['npx', 'kbsync', 'check', '--questions', 'checks.yaml']);

    const run = await runCli(words.slice(2), { cwd: dir, env: { GITHUB_STEP_SUMMARY: summary } });

    expect(run.code, run.stdout + run.stderr).toBe(0);
    const checks = parse(readFileSync(join(dir, 'checks.yaml'), 'utf8')) as unknown[];
    expect(run.stdout.match(/^pass /gm)).toHaveLength(checks.length);
    expect(run.stdout).toMatch(new RegExp(`\\n${checks.length} checks: ${checks.length} passed, 0 failed`));
    expect(parseMarkdown(readFileSync(summary, 'utf8')).headings).toEqual(['kbsync sync', 'Skipped (2)', 'kbsync check']);
    const xml = readFileSync(join(dir, words[words.indexOf('--junit') + 1] ?? ''), 'utf8');
    expect(await junitSchemaErrors(xml)).toEqual([]);
    expect(parseJunit(xml).cases.map((c) => c.outcome)).toEqual(checks.map(() => 'passed'));
  });

  it('checks.yaml is a list of {question, expect: [path, ...], topK?} whose paths are files of the example handbook', () => {
    const checks = parse(readFileSync(join(ROOT, 'examples/github-actions/checks.yaml'), 'utf8')) as unknown[];

    expect(checks.length).toBeGreaterThan(0);
    for (const check of checks) {
      const { question, expect: paths, topK, ...rest } = check as { question: unknown; expect: unknown; topK?: unknown };
      expect(rest).toEqual({});
      expect(typeof question).toBe('string');
      expect(Array.isArray(paths) && paths.length > 0).toBe(true);
      for (const path of paths as string[]) expect(existsSync(join(ROOT, 'examples/docs', path)), path).toBe(true);
      if (topK !== undefined) expect(Number.isInteger(topK) && (topK as number) > 0).toBe(true);
    }
  });
});
