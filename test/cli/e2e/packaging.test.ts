import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureDist, REPO_ROOT } from '../../helpers/build-dist.js';
import { createTempDirs } from '../../helpers/e2e-workspace.js';
import { killHard, spawnKbsync, type KbsyncChild } from '../../helpers/kbsync-child.js';

/**
 * The Dockerfile cannot be built here (no image registry): what can be checked is checked. The paths
 * it copies from the checkout exist, its command starts the daemon, and its HEALTHCHECK answers 0
 * against that daemon.
 */
const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
/** Instructions, with continued lines joined. */
const instructions = dockerfile
  .replace(/\\\n\s*/g, ' ')
  .split('\n')
  .filter((l) => /^[A-Z]+ /.test(l));
const jsonArgs = (name: string): string[] => {
  const line = instructions.filter((l) => l.startsWith(`${name} `)).at(-1) ?? '';
  return JSON.parse(line.slice(line.indexOf('['))) as string[];
};

const temp = createTempDirs();
let child: KbsyncChild | undefined;
afterEach(async () => {
  if (child !== undefined && child.child.exitCode === null) await killHard(child);
  temp.cleanup();
});

describe('the Dockerfile', () => {
  it('copies only paths that exist in the checkout, runs as a non-root user, with /data as a volume', () => {
    const copies = instructions.filter((l) => l.startsWith('COPY ') && !l.includes('--from='));
    const sources = copies.flatMap((l) => l.split(/\s+/).slice(1, -1));

    expect(sources.length).toBeGreaterThan(3);
    for (const source of sources) expect(existsSync(join(REPO_ROOT, source)), source).toBe(true);
    expect(instructions.filter((l) => l.startsWith('USER ')).at(-1)).toBe('USER node');
    expect(instructions).toContain('VOLUME ["/data"]');
    expect(instructions.filter((l) => l.startsWith('FROM ')).every((l) => /^FROM node:24-slim\b/.test(l))).toBe(true);
  });

  it('its command starts kbsync watch, and its HEALTHCHECK command answers 0 against it', async () => {
    await ensureDist();
    const entry = jsonArgs('ENTRYPOINT');
    const cmd = jsonArgs('CMD');
    const health = jsonArgs('HEALTHCHECK');
    // tini is PID 1 (it forwards signals and reaps git's children); node runs kbsync under it.
    expect(entry).toEqual(['/usr/bin/tini', '--', 'node', '/app/bin/kbsync.js']);
    expect(cmd.slice(0, 1)).toEqual(['watch']);
    const http = cmd[cmd.indexOf('--http') + 1] as string;
    const port = http.split(':')[1] as string;
    const healthScript = health[health.indexOf('-e') + 1] as string;
    expect(healthScript).toContain(`http://127.0.0.1:${port}/healthz`);

    // The image's command with the image's paths replaced by a temp /data and a free port.
    const data = temp.make('kbsync-docker-data-');
    writeFileSync(join(data, 'kbsync.yaml'), 'sources:\n  - name: docs\n    path: ./docs\n');
    mkdirSync(join(data, 'docs'));
    writeFileSync(join(data, 'docs', 'a.md'), '# A\n');
    const args = cmd.map((a) => (a === '/data/kbsync.yaml' ? join(data, 'kbsync.yaml') : a === http ? '127.0.0.1:0' : a));
    child = spawnKbsync(args, data);
    const statusPath = join(data, '.kbsync', 'state.db.watch.json');
    const deadline = Date.now() + 20_000;
    let address: string | null = null;
    while (address === null && Date.now() < deadline) {
      if (existsSync(statusPath)) address = (JSON.parse(readFileSync(statusPath, 'utf8')) as { http: string | null }).http;
      if (address === null) await new Promise((r) => setTimeout(r, 50));
    }
    expect(address).not.toBeNull();
    const healthz = await request(`http://${address}/healthz`);
    await healthz.body.text();
    const check = spawnSync(process.execPath, ['-e', healthScript.replace(`127.0.0.1:${port}`, address as string)], { timeout: 10_000 });
    child.child.kill('SIGTERM');
    const exit = await child.exited;

    expect(healthz.statusCode).toBe(200);
    expect(check.status).toBe(0);
    expect(exit.code).toBe(0);
  });
});
