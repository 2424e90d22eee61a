import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync, appendFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { freePort, until } from '../helpers/daemon-children.js';
import { git } from '../helpers/git.js';

// The container image, built and run the way the README's Docker section says, with podman standing
// in for docker (test/docker/engine.sh makes it work here, and the node:24-slim base when none can be
// pulled). The README's commands are the ones run, in its order: the test reads them from there.
// The container shares the host's network, so its daemon listens on a port free on this machine,
// not the README's 9464 that another daemon here may hold (and answer for).

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENGINE = join(ROOT, 'test', 'docker', 'engine.sh');
let port = 0;
const MB = 1_000_000;

/** The shell commands of the README's Docker section (its first sh block), comments dropped. */
function readmeCommands(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Docker'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

const COMMANDS = [
  'docker build -t kbsync .',
  'docker run --rm -v kbsync-data:/data kbsync init',
  'docker run --rm -v kbsync-data:/data --entrypoint cat kbsync /data/kbsync.yaml > kbsync.yaml',
  "docker run --rm -i -v kbsync-data:/data --entrypoint sh kbsync -c 'cat > /data/kbsync.yaml' < kbsync.yaml",
  'docker run -d --name kbsync -v "$PWD/docs:/data/docs:ro" -v kbsync-data:/data -p 9464:9464 kbsync',
  'docker stop kbsync',
  'docker start kbsync',
] as const;

type Run = { code: number | null; stdout: string; stderr: string };

let work = '';
let env: NodeJS.ProcessEnv = {};

/** Runs a command line with bash, `docker` being podman set up by engine.sh; never longer than `timeoutMs`. */
function sh(line: string, cwd: string, timeoutMs: number): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', line], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${timeoutMs} ms)`;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The README's `docker run`, its daemon on this test's own port (the image's CMD with another --http). */
function onOwnPort(run: string): string {
  const mapped = run.replace('-p 9464:9464 kbsync', `-p ${port}:${port} kbsync watch -c /data/kbsync.yaml --http 0.0.0.0:${port}`);
  expect(mapped).not.toBe(run);
  return mapped;
}

async function ok(line: string, cwd = work, timeoutMs = 120_000): Promise<Run> {
  const run = await sh(line, cwd, timeoutMs);
  expect(run.code, `${line}\n${run.stdout}\n${run.stderr}`).toBe(0);
  return run;
}

const podman = (args: string, timeoutMs = 60_000): Promise<Run> => ok(`podman ${args}`, work, timeoutMs);

/** Waits for `check`; on a time-out the error carries the container's log. */
async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  try {
    await until(what, check, timeoutMs);
  } catch (err) {
    const logs = await sh('podman logs --tail 40 kbsync', work, 30_000);
    throw new Error(`${(err as Error).message}\ncontainer log:\n${logs.stdout}${logs.stderr}`);
  }
}

async function get(path: string): Promise<{ status: number; text: string }> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, text: await res.text() };
  } catch {
    return { status: 0, text: '' };
  }
}

const metric = async (name: string): Promise<number> => {
  const { text } = await get('/metrics');
  return Number(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
};

/** The bare repository served over git's "dumb" HTTP protocol on this machine (the container shares its network). */
function serveRepos(root: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = normalize(join(root, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)));
    try {
      if (!path.startsWith(root)) throw new Error('outside');
      const body = readFileSync(path);
      res.writeHead(200).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` })),
  );
}

describe('the container image (Dockerfile), built and run as the README says', () => {
  let repos: { server: Server; url: string } | undefined;
  const origin = { bare: '', work: '' };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'kbsync-image-'));
    port = await freePort();
    const engineEnv = execFileSync('bash', [ENGINE, 'env'], { encoding: 'utf8', timeout: 600_000, stdio: ['ignore', 'pipe', 'inherit'] });
    const bin = join(work, 'bin');
    mkdirSync(bin);
    // The npm registry and CA file of this machine, for the build's npm steps only (build secrets).
    const registry = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim();
    const cafile = execFileSync('npm', ['config', 'get', 'cafile'], { encoding: 'utf8' }).trim();
    const hasCa = cafile !== '' && cafile !== 'null' && cafile !== 'undefined';
    writeFileSync(join(bin, 'npmrc'), `registry=${registry}\n${hasCa ? 'cafile=/run/secrets/npm_ca\n' : ''}`);
    writeFileSync(join(bin, 'npm_ca'), hasCa ? readFileSync(cafile) : '');
    const secrets = `--secret id=npmrc,src=${bin}/npmrc --secret id=npm_ca,src=${bin}/npm_ca`;
    // `docker` is podman, with `--format docker` for a build as the README says (podman drops HEALTHCHECK
    // otherwise); --pull=never, since the base is the one engine.sh made or one already present.
    writeFileSync(
      join(bin, 'docker'),
      `#!/bin/bash\nif [ "$1" = build ]; then shift; exec podman build --format docker --pull=never ${secrets} "$@"; fi\nexec podman "$@"\n`,
    );
    chmodSync(join(bin, 'docker'), 0o755);
    env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
    for (const line of engineEnv.trim().split('\n')) {
      const at = line.indexOf('=');
      env[line.slice(0, at)] = line.slice(at + 1);
    }
    await ok(`bash ${ENGINE} base`, work, 900_000);
    await sh('podman rm -f -t 0 kbsync; podman volume rm -f kbsync-data', work, 60_000);

    mkdirSync(join(work, 'docs'));
    writeFileSync(join(work, 'docs', 'a.md'), '# A\n\nThe first document.\n');
    const reposRoot = join(work, 'repos');
    mkdirSync(reposRoot);
    origin.bare = join(reposRoot, 'origin.git');
    origin.work = join(work, 'clone');
    git(work, ['init', '-q', '--bare', '-b', 'main', origin.bare]);
    git(work, ['clone', '-q', origin.bare, origin.work]);
    git(origin.work, ['checkout', '-q', '-b', 'main']);
    commit('guide.md', '# Guide\n\nFrom a Git source.\n');
    repos = await serveRepos(reposRoot);
  }, 1_200_000);

  function commit(path: string, content: string): void {
    writeFileSync(join(origin.work, path), content);
    git(origin.work, ['add', '-A']);
    git(origin.work, ['commit', '-q', '-m', `add ${path}`]);
    git(origin.work, ['push', '-q', 'origin', 'main']);
    git(origin.bare, ['update-server-info']);
  }

  afterAll(async () => {
    await sh('podman rm -f -t 0 kbsync; podman volume rm -f kbsync-data', work, 60_000);
    repos?.server.close();
    rmSync(work, { recursive: true, force: true });
  }, 120_000);

  it('the README lists exactly the commands this test runs', () => {
    expect(readmeCommands()).toEqual([...COMMANDS]);
    // onOwnPort repeats the image's command with another --http: it must stay the image's command.
    expect(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')).toContain('CMD ["watch", "-c", "/data/kbsync.yaml", "--http", "0.0.0.0:9464"]');
  });

  it('builds, runs with a read-only docs mount, syncs a host file and a Git source, stops cleanly, and restarts without re-uploading', async () => {
    const [build, init, getConfig, putConfig, run, stop, start] = COMMANDS;
    await ok(build, ROOT, 1_200_000);

    const history = JSON.parse((await podman('history --format json kbsync')).stdout) as {
      CreatedBy?: string;
      createdBy?: string;
      Size?: number;
      size?: number;
    }[];
    const appLayer = history.find((h) => /COPY .*\/app/.test(h.CreatedBy ?? h.createdBy ?? ''));
    expect(appLayer, JSON.stringify(history)).toBeDefined();
    expect(appLayer?.Size ?? appLayer?.size ?? Infinity).toBeLessThanOrEqual(80 * MB);
    // podman keeps it at the top of `image inspect`, Docker under Config.
    type Inspected = { Healthcheck?: { Test: string[] }; Config?: { Healthcheck?: { Test: string[] } } };
    const [image] = JSON.parse((await podman('image inspect kbsync')).stdout) as Inspected[];
    expect((image?.Healthcheck ?? image?.Config?.Healthcheck)?.Test.join(' ')).toContain('/healthz');

    await ok(init);
    await ok(getConfig);
    const yaml = parse(readFileSync(join(work, 'kbsync.yaml'), 'utf8')) as Record<string, unknown> & {
      sources: unknown[];
      watch: Record<string, unknown>;
    };
    yaml.sources.push({ name: 'guide', git: { url: `${repos?.url}/origin.git`, ref: 'main', pollSeconds: 2 } });
    yaml.watch.debounceMs = 300;
    yaml.watch.pollIntervalMs = 300;
    writeFileSync(join(work, 'kbsync.yaml'), stringify(yaml));
    await ok(putConfig);

    await ok(onOwnPort(run));
    await waitFor('/readyz answers 200', async () => (await get('/readyz')).status === 200, 120_000);
    expect((await get('/healthz')).status).toBe(200);
    expect(await metric('kbsync_files_tracked')).toBe(2);
    // The read-only mount cannot be probed, so it is polled (README: "Running it in Docker").
    expect(await metric('kbsync_watch_backend{source="docs",backend="polling"}')).toBe(1);
    const pid1 = await podman('exec kbsync cat /proc/1/cmdline');
    expect(pid1.stdout.split('\0')[0]).toBe('/usr/bin/tini');

    writeFileSync(join(work, 'docs', 'b.md'), '# B\n\nAdded on the host.\n');
    await waitFor('b.md synced from the read-only mount', async () => (await metric('kbsync_files_tracked')) === 3, 60_000);
    commit('more.md', '# More\n\nA second commit.\n');
    await waitFor('more.md synced from the Git source', async () => (await metric('kbsync_files_tracked')) === 4, 60_000);
    expect(await metric('kbsync_uploads_total')).toBe(4);

    // Exit code 0: it ended on the stop's SIGTERM, not on the SIGKILL that follows the grace period.
    await ok(stop, work, 60_000);
    const exit = await podman("inspect kbsync --format '{{.State.ExitCode}}'");
    expect(exit.stdout.trim()).toBe('0');

    await ok(start);
    await waitFor('/readyz answers 200 after the restart', async () => (await get('/readyz')).status === 200, 120_000);
    expect(await metric('kbsync_files_tracked')).toBe(4);
    expect(await metric('kbsync_uploads_total')).toBe(0);
    await ok(stop, work, 60_000);

    const notOwned = await podman('run --rm -v kbsync-data:/data --user root --entrypoint find kbsync /data ! -uid 1000');
    expect(notOwned.stdout).toBe('');
    const logs = await podman('logs kbsync');
    appendFileSync(join(work, 'container.log'), logs.stderr);
    expect(logs.stderr).not.toContain('"level":50');
  }, 1_800_000);
});
