import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { startService } from '../../src/service/server.js';
import { runCli, useTempDirs, type CliRun } from './helpers.js';

/**
 * `query` and `chat` name each result by the path of the file it came from, as `plan` prints it: from the
 * state (remote id → source and path), `source/path` with several sources and the bare path with one; a
 * copy the state does not know (uploaded by hand) by the service's file name; and by the service's id
 * only when neither knows it. In-process, on the embedded target, after a real `sync --wait`.
 */

type Named = { knowledgeSourceId: string; chunkIndex: number; score: number; text: string; source: string | null; path: string | null };

function jsonOf<T>(run: CliRun): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`no JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}

/** Writes `files` (path → text) under `dir`. */
function writeTree(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** A config on the embedded target with the named sources (each `./NAME`). */
function configWith(dir: string, sources: string[]): void {
  const list = sources.map((s) => `  - name: ${s}\n    path: ./${s}\n`).join('');
  writeFileSync(
    join(dir, 'kbsync.yaml'),
    `target:\n  kind: embedded\n  dataDir: .kbsync/service\nstate: .kbsync/state.db\nsources:\n${list}`,
  );
}

/** Uploads a file straight to the embedded dataset through the API (the state never hears of it). */
async function uploadByHand(dir: string, name: string, text: string): Promise<string> {
  const dataDir = join(dir, '.kbsync', 'service');
  const service = await startService({ dataDir, host: '127.0.0.1', port: 0 });
  const client = createClient({ baseUrl: service.url, apiKey: readFileSync(join(dataDir, 'embedded-key'), 'utf8').trim() });
  try {
    writeFileSync(join(dir, name), text);
    const up = await client.uploadFile({ path: join(dir, name), name });
    // The service processes it in the background: wait here, while this service runs.
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      const file = (await client.listAllFiles()).find((f) => f.id === up.id);
      if (file?.status === 'processed') return up.id;
    }
    throw new Error(`${name} was not processed`);
  } finally {
    await client.close();
    await service.close();
  }
}

describe('query and chat name their sources by path', () => {
  const tempDir = useTempDirs();

  it('several sources: source/path from the state, the service file name for a copy the state does not know', async () => {
    const dir = tempDir();
    writeTree(dir, {
      'book/ch16-04-extensible-concurrency-sync-and-send.md':
        '# Send and Sync\n\nThe marker traits Send and Sync let a zebracorn cross threads safely.\n',
      'notes/setup.md': '# Setup\n\nInstall the kiwifruit toolchain before anything else.\n',
    });
    configWith(dir, ['book', 'notes']);
    const sync = await runCli(['sync', '--wait', '--json'], { cwd: dir });
    expect(sync.code, sync.stderr).toBe(0);
    const manualId = await uploadByHand(dir, 'manual-upload.md', '# Manual\n\nThe quokkaberry procedure is written only here.\n');

    const traits = await runCli(['query', 'zebracorn marker traits', '--top-k', '1', '--json'], { cwd: dir });
    const text = await runCli(['query', 'zebracorn marker traits', '--top-k', '1'], { cwd: dir });
    const manual = await runCli(['query', 'quokkaberry procedure', '--top-k', '1', '--json'], { cwd: dir });

    expect(traits.code, traits.stderr).toBe(0);
    const [top] = jsonOf<{ results: Named[] }>(traits).results;
    expect(top).toMatchObject({ source: 'book', path: 'book/ch16-04-extensible-concurrency-sync-and-send.md', chunkIndex: 0 });
    expect(top?.knowledgeSourceId).toMatch(/^\d+$/);
    expect(Object.keys(top ?? {}).sort()).toEqual(['chunkIndex', 'knowledgeSourceId', 'origin', 'path', 'score', 'source', 'text']);
    expect(text.stdout).toMatch(/^1\. score \d\.\d{3} {2}book\/ch16-04-extensible-concurrency-sync-and-send\.md chunk 0 {2}from "Send and Sync"$/m);
    expect(manual.code, manual.stderr).toBe(0);
    expect(jsonOf<{ results: Named[] }>(manual).results[0]).toMatchObject({
      knowledgeSourceId: manualId,
      source: null,
      path: 'manual-upload.md',
    });
  });

  it('one source: the bare path, as plan prints it; chat names its sources the same way', async () => {
    const dir = tempDir();
    writeTree(dir, { 'docs/guide/expenses.md': '# Expenses\n\nA manager approves every expense over 500 EUR within two days.\n' });
    configWith(dir, ['docs']);
    const sync = await runCli(['sync', '--wait'], { cwd: dir });
    expect(sync.code, sync.stderr).toBe(0);
    const plan = await runCli(['plan', '--all'], { cwd: dir });
    expect(plan.stdout).toMatch(/ guide\/expenses\.md /);
    expect((await runCli(['agents', 'create', 'helper'], { cwd: dir })).code).toBe(0);

    const query = await runCli(['query', 'who approves an expense', '--top-k', '1', '--json'], { cwd: dir });
    const chat = await runCli(['chat', 'helper', 'Who approves an expense over 500 EUR?'], { cwd: dir });
    const chatJson = await runCli(['chat', 'helper', 'Who approves an expense over 500 EUR?', '--json'], { cwd: dir });

    expect(jsonOf<{ results: Named[] }>(query).results[0]).toMatchObject({ source: 'docs', path: 'guide/expenses.md' });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toMatch(/\nsources:\n {2}guide\/expenses\.md chunk 0 \(score \d\.\d{3}\)/);
    expect(jsonOf<{ sources: Named[] }>(chatJson).sources[0]).toMatchObject({ source: 'docs', path: 'guide/expenses.md', chunkIndex: 0 });
  });
});
