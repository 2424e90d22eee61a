import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureDist } from '../../../helpers/build-dist.js';
import { createGitOrigin, GIT_ENV } from '../../../helpers/e2e-git.js';
import { createTempDirs, createWorkspace } from '../../../helpers/e2e-workspace.js';
import { isUpload, startFaultProxy } from '../../../helpers/fault-proxy.js';
import { printFigures } from '../../../helpers/figures.js';
import { spawnKbsync, type ChildExit, type KbsyncChild } from '../../../helpers/kbsync-child.js';

/**
 * The promise "the API key is in no output and no file": `kbsync serve` and every sync-side command
 * run as real child processes, with trace logging and KBSYNC_DEBUG=1 (stacks and causes), in text
 * and with --json, on their success and error paths (a refused key, an unreachable service, a server
 * that echoes the key back in its error messages); the key given in the config, through ${VAR} and
 * in an apiKeyFile. Then every byte they printed, the state folder (database, WAL, lock, git checkout)
 * and the service's data folder are searched for the key, whole and in part, plain, hex and base64.
 * The one place it may appear is where it is meant to: `kbsync serve` prints a new dataset's key once.
 */

const temp = createTempDirs();
afterAll(() => temp.cleanup());

/** Every form of `key` worth searching for: whole, its secret part, as hex and base64. */
function formsOf(key: string): string[] {
  const secret = key.replace(/^kbs_/, '');
  const forms = [key, secret, secret.slice(0, 16), secret.slice(-16)];
  return [
    ...forms,
    ...forms.map((f) => Buffer.from(f).toString('hex')),
    ...forms.map((f) => Buffer.from(f).toString('base64').replace(/=+$/, '')),
  ];
}

/** How often any form of `key` occurs in `bytes`. */
function occurrences(bytes: Buffer, key: string): number {
  let n = 0;
  for (const form of formsOf(key)) for (let at = bytes.indexOf(form); at >= 0; at = bytes.indexOf(form, at + 1)) n++;
  return n;
}

/** Every regular file under `dir`, recursively (links not followed). */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** Starts `kbsync serve --port 0` and waits for its address and the key it prints on a first start. */
async function startServe(
  dataDir: string,
  env: Record<string, string>,
): Promise<{ k: KbsyncChild; url: string; apiKey: string; printed: () => string }> {
  const k = spawnKbsync(['serve', '--port', '0', '--data', dataDir], dataDir, env);
  let out = '';
  const found = await new Promise<{ url: string; apiKey: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kbsync serve printed no key:\n${out}`)), 30_000);
    k.child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /^listening on (\S+)$/m.exec(out)?.[1];
      const apiKey = /^api key: (\S+)$/m.exec(out)?.[1];
      if (url !== undefined && apiKey !== undefined) {
        clearTimeout(timer);
        resolve({ url, apiKey });
      }
    });
    void k.exited.then((exit) => reject(new Error(`kbsync serve ended (${exit.code}): ${exit.stderr}`)));
  });
  return { k, ...found, printed: () => out };
}

describe('the API key in no output and no file', () => {
  it('kbsync serve, config check, plan, sync, status, explain, query, agents and chat, with trace logs and KBSYNC_DEBUG=1, text and --json, success and error paths', async () => {
    await ensureDist();
    const root = temp.make('kbsync-key-');
    const dataDir = join(root, 'service');
    mkdirSync(dataDir);
    const debug = { KBSYNC_LOG_LEVEL: 'trace', KBSYNC_DEBUG: '1', ...GIT_ENV };
    const serve = await startServe(dataDir, debug);
    const key = serve.apiKey;
    const wrongKey = `kbs_${randomBytes(32).toString('base64url')}`;
    const proxy = await startFaultProxy(serve.url);
    const runs: { args: string[]; exit: ChildExit }[] = [];
    try {
      mkdirSync(join(root, 'git'));
      const origin = createGitOrigin(join(root, 'git'), { 'docs/g.md': '# G\nfrom git\n' });
      const wsRoot = join(root, 'ws');
      mkdirSync(wsRoot);
      const sources = [
        { name: 'docs', path: './docs' },
        { name: 'repo', git: { url: origin.bare, ref: 'main' } },
      ];
      const target = (apiKey: Record<string, string>, baseUrl = serve.url): Record<string, unknown> => ({
        kind: 'remote',
        baseUrl,
        plan: 'basic',
        ...apiKey,
      });
      // The key reaches kbsync through the environment, as the starter config and the README suggest.
      const ws = createWorkspace(wsRoot, { baseUrl: serve.url, apiKey: '${KBSYNC_API_KEY}', config: { sources } });
      ws.write('a.md', '# A\nalpha bravo\n');
      ws.write('notes.rtf', '{\\rtf1 unsupported}');
      const kbsync = async (env: Record<string, string>, ...args: string[]): Promise<ChildExit> => {
        const exit = await spawnKbsync([...args, '-c', ws.configPath], ws.root, { ...debug, ...env }).exited;
        runs.push({ args, exit });
        return exit;
      };
      const withKey = { KBSYNC_API_KEY: key };

      // Success paths, text and --json.
      for (const args of [
        ['config', 'check'],
        ['config', 'check', '--json'],
        ['plan', '--all'],
        ['plan', '--json'],
        ['sync', '--wait', '--wait-timeout', '20'],
      ]) {
        expect((await kbsync(withKey, ...args)).code, args.join(' ')).toBe(0);
      }
      ws.write('b.md', '# B\ncharlie\n');
      for (const args of [
        ['sync', '--json'],
        ['status'],
        ['status', '--json'],
        ['explain', 'a.md'],
        ['explain', 'notes.rtf', '--json'],
        ['query', 'alpha'],
        ['query', 'alpha', '--json'],
        ['agents', 'create', 'keeper', '--system-prompt', 'Be brief.'],
        ['agents', 'config', 'keeper', '--top-k', '2', '--json'],
        ['agents', 'list'],
        ['agents', 'show', 'keeper', '--json'],
        ['agents', 'datasets', 'keeper', 'attach', '--json'],
        ['chat', 'keeper', 'alpha?'],
      ]) {
        expect((await kbsync(withKey, ...args)).code, args.join(' ')).toBe(0);
      }
      // An error the service gives (no such agent), with the stack and causes KBSYNC_DEBUG=1 adds.
      expect((await kbsync(withKey, 'chat', '999999', 'hello?')).code).toBe(1);
      expect((await kbsync(withKey, 'chat', '999999', 'hello?', '--json')).code).toBe(1);
      expect((await kbsync(withKey, 'agents', 'show', 'nobody')).code).toBe(1);

      // The key in an apiKeyFile (0600), then written into the config itself.
      const keyFile = join(ws.root, 'key.txt');
      writeFileSync(keyFile, `${key}\n`);
      chmodSync(keyFile, 0o600);
      ws.configure({ target: target({ apiKeyFile: './key.txt' }) });
      ws.write('c.md', '# C\ndelta\n');
      expect((await kbsync({}, 'sync', '--json')).code).toBe(0);
      expect((await kbsync({}, 'config', 'check')).code).toBe(0);
      ws.configure({ target: target({ apiKey: key }) });
      expect((await kbsync({}, 'config', 'check', '--json')).code).toBe(0);
      expect((await kbsync({}, 'status')).code).toBe(0);

      // A key the service refuses, and a service that cannot be reached.
      ws.configure({ target: target({ apiKey: '${KBSYNC_API_KEY}' }) });
      ws.write('d.md', '# D\necho\n');
      expect((await kbsync({ KBSYNC_API_KEY: wrongKey }, 'sync')).code).toBe(4);
      expect((await kbsync({ KBSYNC_API_KEY: wrongKey }, 'query', 'alpha', '--json')).code).toBe(4);
      ws.configure({ target: target({ apiKey: '${KBSYNC_API_KEY}' }, 'http://127.0.0.1:9') });
      expect((await kbsync(withKey, 'sync', '--json')).code).not.toBe(0);

      // A server that echoes the key back in its error messages (a 500 on the upload, a 401 on a query).
      proxy.setHooks({
        onRequest: (req) => {
          const echoed = `request with key ${req.headers['x-api-key'] ?? ''} failed`;
          if (isUpload(req)) return { kind: 'respond', status: 500, json: { error: { code: 'internal', message: echoed } } };
          if (req.url.includes('/datasets/query'))
            return { kind: 'respond', status: 401, json: { error: { code: 'unauthorized', message: echoed } } };
          return { kind: 'forward' };
        },
      });
      ws.configure({ target: target({ apiKey: '${KBSYNC_API_KEY}' }, proxy.url) });
      expect((await kbsync(withKey, 'sync', '--json')).code).toBe(1);
      expect((await kbsync(withKey, 'query', 'alpha')).code).toBe(4);
      // The server really did put the key in what it sent back: the search below is not vacuous.
      expect(proxy.requests.some((r) => r.headers['x-api-key'] === key)).toBe(true);
    } finally {
      await proxy.close();
      serve.k.child.kill('SIGTERM');
    }
    const serveExit = await serve.k.exited;

    // Debug logging was on: trace/debug lines from pino, and stacks on the error paths.
    const allStderr = runs.map((r) => r.exit.stderr).join('\n');
    expect(serveExit.stderr).toMatch(/"level":(10|20|30)/);
    expect(allStderr).toMatch(/"level":(10|20|30|40)/);
    expect(allStderr).toMatch(/\n\s+at /);

    // Search: every command's stdout and stderr; the state folder; the service's data folder.
    const outputs = runs.flatMap((r) => [
      { where: `kbsync ${r.args.join(' ')} (stdout)`, bytes: Buffer.from(r.exit.stdout) },
      { where: `kbsync ${r.args.join(' ')} (stderr)`, bytes: Buffer.from(r.exit.stderr) },
    ]);
    const stateFiles = filesUnder(join(root, 'ws', '.kbsync'));
    const serviceFiles = filesUnder(dataDir);
    const files = [...stateFiles, ...serviceFiles].map((path) => ({ where: path, bytes: readFileSync(path) }));
    const searched = [...outputs, ...files, { where: 'kbsync serve (stderr)', bytes: Buffer.from(serveExit.stderr) }];
    const found = searched
      .flatMap((s) => [key, wrongKey].map((k) => ({ where: s.where, n: occurrences(s.bytes, k) })))
      .filter((f) => f.n > 0);

    expect(stateFiles.some((p) => p.endsWith('state.db'))).toBe(true);
    expect(stateFiles.some((p) => p.includes(`${join('.kbsync', 'git')}`))).toBe(true);
    expect(serviceFiles.length).toBeGreaterThan(0);
    expect(found).toEqual([]);
    // The one place by design: serve's first start prints the new dataset's key, once.
    const printedByServe = serveExit.stdout.split(key).length - 1;
    expect(printedByServe).toBe(1);
    const bytes = searched.reduce((sum, s) => sum + s.bytes.length, 0);
    printFigures('the API key in no output and no file', {
      'kbsync commands run': runs.length + 1,
      'outputs searched': `${outputs.length + 1} (${bytes - files.reduce((s, f) => s + f.bytes.length, 0)} bytes)`,
      'state and service files searched': `${files.length} (${files.reduce((s, f) => s + f.bytes.length, 0)} bytes, ${stateFiles.reduce((s, p) => s + statSync(p).size, 0)} of them state)`,
      'forms of each key searched': formsOf(key).length,
      'occurrences found': found.length,
      "serve's one-time print of a new key": printedByServe,
    });
  }, 180_000);
});
