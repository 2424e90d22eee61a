import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMBEDDED_START_CREDITS } from '../../../src/service/embedded.js';
import { startService } from '../../../src/service/server.js';
import { extensionOf, isSupportedFileName } from '../../../src/shared/file-types.js';
import { uploadCost } from '../../../src/shared/plans.js';
import { REPO_ROOT, ensureDist } from '../../helpers/build-dist.js';
import { datasetApi, type E2eDataset } from '../../helpers/e2e-service.js';
import type { JsonReport } from '../../helpers/e2e-workspace.js';
import { spawnKbsync } from '../../helpers/kbsync-child.js';
import { until } from '../../helpers/until.js';

/**
 * The README's commands end to end: `node bin/kbsync.js ...` as real child processes, on a copy of the
 * bundled examples/ folder (so the repo's examples/.kbsync is never touched), with the embedded service
 * and its SQLite state as `npm run example` leaves them. Between commands the test reads the service
 * through its own API by starting the project's local service on port 0 over the embedded data folder.
 *
 * The tests share one copy and run in order: the two syncs in beforeAll, then explain, then query and chat.
 */

/** `npm run example`'s config, relative to the copy's root, as the script passes it. */
const CONFIG = 'examples/kbsync.yaml';

type Run = { code: number | null; stdout: string; stderr: string };

let root = '';
/** The embedded service's data folder in the copy (examples/kbsync.yaml: `dataDir: .kbsync/service`). */
const dataDir = (): string => join(root, 'examples', '.kbsync', 'service');
const docs = (): string => join(root, 'examples', 'docs');

/** Runs `node bin/kbsync.js ...args` in the copy's root (a real child process) and waits for its end. */
async function kbsync(...args: string[]): Promise<Run> {
  const { code, stdout, stderr } = await spawnKbsync(args, root).exited;
  return { code, stdout, stderr };
}

/** Parses a `--json` report, or fails with what the command printed. */
function reportOf(run: Run): JsonReport {
  try {
    return JSON.parse(run.stdout) as JsonReport;
  } catch {
    throw new Error(`no JSON report (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}

/**
 * Starts the local service over the embedded data folder (no kbsync child may be running), with the
 * key the embedded target keeps in `embedded-key`, runs `fn` against its API, and stops it.
 */
async function onService<T>(fn: (ds: E2eDataset, url: string) => Promise<T>): Promise<T> {
  const service = await startService({ dataDir: dataDir(), host: '127.0.0.1', port: 0 });
  try {
    const apiKey = readFileSync(join(dataDir(), 'embedded-key'), 'utf8').trim();
    const datasetId = service.admin.datasetOfKey(apiKey);
    if (datasetId === undefined) throw new Error('embedded-key belongs to no dataset of the embedded service');
    return await fn(datasetApi(service.url, datasetId, apiKey), service.url);
  } finally {
    await service.close();
  }
}

const balance = (): Promise<number> => onService((ds) => ds.balance());

/** Waits until the service has processed every file (the embedded service stops with each command). */
async function untilProcessed(ds: E2eDataset): Promise<void> {
  let files: Awaited<ReturnType<E2eDataset['files']>> = [];
  await until(
    () => `files processed: ${JSON.stringify(files.map((f) => [f.name, f.status, f.error]))}`,
    async () => {
      files = await ds.files();
      return files.length > 0 && files.every((f) => f.status === 'processed');
    },
    20_000,
  );
}

/** The example's files a sync should upload: supported types, outside the excluded drafts/ folder. */
function expectedUploads(): string[] {
  const all = readdirSync(docs(), { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  return all
    .map((e) => relative(docs(), join(e.parentPath, e.name)).split(sep).join('/'))
    .filter((path) => !path.startsWith('drafts/') && (isSupportedFileName(path) || EXAMPLE_CONVERTS.includes(extensionOf(path))))
    .sort();
}

/** The types examples/kbsync.yaml converts to Markdown: their files go up as `<path>.md`. */
const EXAMPLE_CONVERTS = ['pdf', 'pptx'];
const remoteNameOf = (path: string): string => (EXAMPLE_CONVERTS.includes(extensionOf(path)) ? `${path}.md` : path);

let explainBefore: Run;
let first: Run;
let second: Run;
let balanceAfterFirst = NaN;
let balanceAfterSecond = NaN;

beforeAll(async () => {
  await ensureDist();
  root = mkdtempSync(join(tmpdir(), 'kbsync-cli-e2e-'));
  // Not a state a developer's own `npm run example` may have left in the repo.
  cpSync(join(REPO_ROOT, 'examples'), join(root, 'examples'), { recursive: true, filter: (src) => !src.split(sep).includes('.kbsync') });

  explainBefore = await kbsync('explain', '-c', CONFIG, 'policies/expenses.md');
  // `npm run example` is `node bin/kbsync.js sync -c examples/kbsync.yaml`; --json to read its report.
  first = await kbsync('sync', '-c', CONFIG, '--json');
  balanceAfterFirst = await balance();
  second = await kbsync('sync', '-c', CONFIG, '--json');
  balanceAfterSecond = await balance();
}, 180_000);

afterAll(() => {
  if (root !== '') rmSync(root, { recursive: true, force: true });
});

describe('the example, synced twice (npm run example)', () => {
  it('the first run uploads every supported file for exactly the planned credits; the second uploads and spends nothing', () => {
    const uploads = expectedUploads();
    const one = reportOf(first);
    const two = reportOf(second);
    // A converted document is priced by its Markdown, whose size the report gives.
    const sizeOf = (path: string): number =>
      EXAMPLE_CONVERTS.includes(extensionOf(path))
        ? Number(one.items.find((i) => i.path === path)?.size)
        : readFileSync(join(docs(), path)).length;
    const cost = uploads.reduce((sum, path) => sum + uploadCost(sizeOf(path)), 0);

    expect(first.code).toBe(0);
    expect(uploads.length).toBeGreaterThan(0);
    expect(
      one.items
        .filter((i) => i.action === 'upload')
        .map((i) => i.path)
        .sort(),
    ).toEqual(uploads);
    expect(one.summary).toMatchObject({ uploaded: uploads.length, failed: 0, deferred: 0, creditsPlanned: cost, creditsSpent: cost });
    // What the README says of the example: drafts excluded by the config, the .rtf unsupported.
    expect(one.items.filter((i) => i.action.startsWith('skip:')).map((i) => [i.path, i.action])).toEqual([
      ['drafts', 'skip:ignored'],
      ['notes.rtf', 'skip:unsupported'],
    ]);
    expect(EMBEDDED_START_CREDITS - balanceAfterFirst).toBe(cost);

    expect(second.code).toBe(0);
    expect(two.summary).toMatchObject({
      uploaded: 0,
      unchanged: uploads.length,
      failed: 0,
      deferred: 0,
      creditsPlanned: 0,
      creditsSpent: 0,
    });
    expect(balanceAfterSecond).toBe(balanceAfterFirst);
  });

  it('the service holds one copy of each uploaded file', async () => {
    const names = await onService(async (ds) => (await ds.files()).map((f) => f.name).sort());

    expect(names).toEqual(expectedUploads().map(remoteNameOf).sort());
  });
});

describe('kbsync config check (the bundled CLI)', () => {
  it('prints the resolved config as YAML, exit 0; --json prints it as one JSON document', async () => {
    const text = await kbsync('config', 'check', '-c', CONFIG);
    const json = await kbsync('config', 'check', '-c', CONFIG, '--json');

    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^# .*kbsync\.yaml: OK \(resolved; secrets redacted\)\n/);
    expect(text.stdout).toMatch(/^sources:$/m);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      target: { kind: 'embedded' },
      sources: [expect.objectContaining({ name: expect.any(String) })],
    });
  });
});

describe('kbsync explain PATH', () => {
  it('before the first sync: a new file is an upload, with its cost and the name it will get', () => {
    expect(explainBefore.code).toBe(0);
    expect(explainBefore.stdout).toMatch(/^handbook\/policies\/expenses\.md\n/);
    expect(explainBefore.stdout).toMatch(/decision: +upload: new file\n/);
    expect(explainBefore.stdout).toMatch(/credits: +5 \(upload: 5/);
    expect(explainBefore.stdout).toMatch(/remote: +will be stored as policies\/expenses\.md\n/);
    expect(explainBefore.stdout).toMatch(/state: +not tracked before this plan\n/);
  });

  it('after the syncs: the uploaded file is unchanged, with its remote copy and the upload the state remembers', async () => {
    const uploaded = reportOf(first).items.find((i) => i.path === 'policies/expenses.md');

    const run = await kbsync('explain', '-c', CONFIG, 'policies/expenses.md');

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/decision: +skip:unchanged: unchanged since last sync/);
    expect(run.stdout).toMatch(/credits: +0\n/);
    expect(uploaded?.remoteId).toMatch(/^\d+$/);
    expect(run.stdout).toContain(`policies/expenses.md, id ${String(uploaded?.remoteId)}\n`);
    expect(run.stdout).toMatch(/state: .*last decision upload \(new file\)/);
  });

  it("after the syncs: the remote copy's chunk count, as the listing gave it, in the text and in --json", async () => {
    // The embedded service processes while a command runs: on a slow machine the second sync's listing
    // may still say queued. Once processed, a sync that changes nothing reads the listing again.
    await onService(untilProcessed);
    expect((await kbsync('sync', '-c', CONFIG, '--json')).code).toBe(0);
    const text = await kbsync('explain', '-c', CONFIG, 'policies/expenses.md');
    const json = await kbsync('explain', '-c', CONFIG, 'policies/expenses.md', '--json');

    expect(text.stdout).toMatch(/remote id \d+ \(processed, [1-9]\d* chunks?\)/);
    const items = (JSON.parse(json.stdout) as { items: { path: string; remoteChunks: number | null }[] }).items;
    expect(items.map((i) => i.remoteChunks)).toEqual([expect.any(Number)]);
    expect(text.stdout).toContain(`, ${String(items[0]?.remoteChunks)} chunk`);
  });

  it('an unsupported file (notes.rtf) is skipped, with why', async () => {
    const run = await kbsync('explain', '-c', CONFIG, 'notes.rtf');

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^handbook\/notes\.rtf\n/);
    expect(run.stdout).toMatch(/decision: +skip:unsupported: unsupported file type: \.rtf/);
    expect(run.stdout).toMatch(/credits: +0\n/);
  });

  it("a file inside an excluded folder (drafts/**): the folder's decision, said to cover it", async () => {
    const run = await kbsync('explain', '-c', CONFIG, 'drafts/reorg-plan.md');

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^drafts\/reorg-plan\.md is inside a folder that is skipped as a whole/);
    expect(run.stdout).toMatch(/decision: +skip:ignored: ignored: matches exclude: drafts\/\*\*/);
  });

  it('a secret-looking file (.env) is skipped without being read: no hash, nothing of its content', async () => {
    writeFileSync(join(docs(), '.env'), 'API_TOKEN=do-not-print-me\n');

    const run = await kbsync('explain', '-c', CONFIG, '.env');
    const json = await kbsync('explain', '-c', CONFIG, 'handbook/.env', '--json');

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^handbook\/\.env\n/);
    expect(run.stdout).toMatch(/decision: +skip:secret: .*\.env/);
    expect(run.stdout).not.toContain('sha256:');
    expect(run.stdout).not.toContain('do-not-print-me');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      items: [{ source: 'handbook', path: '.env', action: 'skip:secret', credits: 0, sha256: null }],
    });
  });

  it('a path in no source: exit 2 (usage), naming the path', async () => {
    const run = await kbsync('explain', '-c', CONFIG, 'no-such-file.md');
    const json = await kbsync('explain', '-c', CONFIG, 'no-such-file.md', '--json');

    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('kbsync: "no-such-file.md" is not in any source');
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: 'usage', exitCode: 2 } });
  });
});

describe('kbsync query and chat on the synced example (1 credit each, read on the service)', () => {
  let agentId = '';

  beforeAll(async () => {
    await onService(untilProcessed);
    // The README's way: `kbsync agents create` (5 credits, before any measurement).
    const created = await kbsync('agents', 'create', '-c', CONFIG, 'handbook', '--json');
    if (created.code !== 0) throw new Error(`agents create failed (exit ${created.code}): ${created.stderr}`);
    agentId = (JSON.parse(created.stdout) as { agent: { id: string } }).agent.id;
  }, 60_000);

  it('query TEXT --top-k 3: exit 0, three ranked results from the handbook with where each came from, 1 credit', async () => {
    const before = await balance();

    const run = await kbsync('query', '-c', CONFIG, 'who approves expenses', '--top-k', '3');

    expect(run.code).toBe(0);
    // Each result named by its path in the handbook source, as plan prints it (one source: no prefix).
    expect(run.stdout.match(/^\d+\. score \d\.\d{3} {2}[\w/-]+\.(md|txt|csv|json|jsonl) chunk \d+( {2}.+)?$/gm)).toHaveLength(3);
    // The chunk's heading path (policies/expenses.md), stored at ingest, follows its number.
    expect(run.stdout).toMatch(/^\d+\. score .* chunk \d+ {2}from "Expenses > How to claim"\n(.+\n)*.*manager's approval/m);
    expect(before - (await balance())).toBe(1);
  });

  it('query --json: {"results": [{text, score, knowledgeSourceId, chunkIndex, source, path, origin}]}, best first, 1 credit', async () => {
    const before = await balance();

    const run = await kbsync('query', '-c', CONFIG, 'holiday', 'days', '--top-k', '2', '--json');
    type Origin = { heading: string | null; firstRow: number | null; lastRow: number | null };
    const { results } = JSON.parse(run.stdout) as {
      results: {
        text: string;
        score: number;
        knowledgeSourceId: string;
        chunkIndex: number;
        source: string;
        path: string;
        origin: Origin;
      }[];
    };

    expect(run.code).toBe(0);
    expect(results).toHaveLength(2);
    for (const r of results) {
      expect(Object.keys(r).sort()).toEqual(['chunkIndex', 'knowledgeSourceId', 'origin', 'path', 'score', 'source', 'text']);
      expect(r).toMatchObject({
        text: expect.any(String),
        score: expect.any(Number),
        knowledgeSourceId: expect.stringMatching(/^\d+$/),
        chunkIndex: expect.any(Number),
        source: 'handbook',
      });
      expect(expectedUploads()).toContain(r.path);
      expect(Object.keys(r.origin).sort()).toEqual(['firstRow', 'heading', 'lastRow']);
    }
    expect(results[0]?.score).toBeGreaterThanOrEqual(results[1]?.score ?? Infinity);
    expect(results.map((r) => r.text).join('\n')).toMatch(/holiday/i);
    // holidays.csv: ten records under a header, all in one chunk (records are numbered from 1 after the header).
    const csv = results.find((r) => r.text.includes('Good Friday'));
    expect(csv?.origin).toEqual({ heading: null, firstRow: 1, lastRow: 10 });
    expect(before - (await balance())).toBe(1);
  });

  it.each([['0'], ['21']])('query --top-k %s: exit 2 naming --top-k, nothing sent or charged', async (topK) => {
    const before = await balance();

    const run = await kbsync('query', '-c', CONFIG, 'anything', '--top-k', topK);

    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`--top-k: a whole number from 1 to 20, got "${topK}"`);
    expect(await balance()).toBe(before);
  });

  it('chat AGENT TEXT: exit 0, an answer from the handbook with its sources, 1 credit', async () => {
    const before = await balance();

    const run = await kbsync('chat', '-c', CONFIG, agentId, 'Who approves an expense over 500 EUR?');

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/manager/i);
    expect(run.stdout).toMatch(/\nsources:\n {2}policies\/expenses\.md chunk \d+ \(score \d\.\d{3}\)/);
    expect(run.stdout).toMatch(/^ {2}policies\/expenses\.md chunk \d+ \(score \d\.\d{3}\) {2}from "Expenses > [^"]+"$/m);
    expect(before - (await balance())).toBe(1);
  });

  it('chat --json: {"response", "agent", "sources"}, 1 credit', async () => {
    const before = await balance();

    const run = await kbsync('chat', '-c', CONFIG, agentId, 'How', 'do', 'I', 'swap', 'an', 'on-call', 'shift?', '--json');
    const answer = JSON.parse(run.stdout) as {
      response: string;
      sources: { knowledgeSourceId: string; chunkIndex: number; score: number; source: string; path: string }[];
    };

    expect(run.code).toBe(0);
    expect(Object.keys(answer).sort()).toEqual(['agent', 'response', 'sources']);
    expect(answer.response).toMatch(/on-call|swap/i);
    expect(answer.sources.length).toBeGreaterThan(0);
    expect(answer.sources[0]).toMatchObject({
      knowledgeSourceId: expect.stringMatching(/^\d+$/),
      chunkIndex: expect.any(Number),
      score: expect.any(Number),
      source: 'handbook',
    });
    expect(expectedUploads()).toContain(answer.sources[0]?.path);
    expect(before - (await balance())).toBe(1);
  });

  it('chat with an unknown agent: exit 1 (not_found, error-table.ts), the message and hint, nothing charged', async () => {
    const before = await balance();

    const run = await kbsync('chat', '-c', CONFIG, '999999', 'hello?');
    const json = await kbsync('chat', '-c', CONFIG, '999999', 'hello?', '--json');

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^kbsync: .*404 not_found: agent not found\n {2}Check the id you gave/m);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: 'not_found', exitCode: 1 } });
    expect(await balance()).toBe(before);
  });

  it('query over a budget cap: not sent, exit 3, nothing charged (README, "Money")', async () => {
    // The same state and service, with a day cap the example's syncs already used up.
    const capped = readFileSync(join(root, CONFIG), 'utf8').replace(/maxCreditsPerDay: \d+/, 'maxCreditsPerDay: 1');
    expect(capped).toContain('maxCreditsPerDay: 1\n');
    writeFileSync(join(root, 'examples', 'capped.yaml'), capped);
    const before = await balance();

    const run = await kbsync('query', '-c', 'examples/capped.yaml', 'who approves expenses');

    expect(run.code).toBe(3);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/maxCreditsPerDay/);
    expect(await balance()).toBe(before);
  });
});

describe('kbsync check and audit on the synced example (README, "The example")', () => {
  beforeAll(async () => {
    await onService(untilProcessed);
  }, 60_000);

  it('check -c examples/kbsync.yaml --questions examples/checks.yaml: every check passes at rank 1, 1 credit each', async () => {
    const before = await balance();

    const run = await kbsync('check', '-c', CONFIG, '--questions', 'examples/checks.yaml');

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.match(/^pass {2}".*" +\S+ @1$/gm)).toHaveLength(3);
    expect(run.stdout).toMatch(/policies\/expenses\.md @1/);
    expect(run.stdout).toMatch(/\n3 checks: 3 passed, 0 failed; 3 credits spent \(3 queries\)\n$/);
    expect(before - (await balance())).toBe(3);
  });

  it('audit -c examples/kbsync.yaml: no drift, and nothing charged', async () => {
    const before = await balance();

    const run = await kbsync('audit', '-c', CONFIG, '--fail-on-drift');

    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toMatch(
      /^no drift: the dataset holds exactly the tracked copies of the local files\n\n12 local files, 12 tracked, 12 remote files; 0 findings\n$/,
    );
    expect(await balance()).toBe(before);
  });
});
