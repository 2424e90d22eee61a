import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { openState } from '../../../src/sync/state/index.js';
import type { PgStateStore } from '../../../src/sync/state/pg/index.js';
import { ensureDist } from '../../helpers/build-dist.js';
import { createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { isUpload } from '../../helpers/fault-proxy.js';
import { printFigures } from '../../helpers/figures.js';
import { killHard, spawnKbsync, type ChildExit, type KbsyncChild } from '../../helpers/kbsync-child.js';
import { freshDatabase } from '../../helpers/postgres.js';
import { createPrng } from '../../helpers/prng.js';

/**
 * Eight `kbsync sync` processes (the real CLI, as children), each with its own source folder, syncing
 * into one dataset through one PostgreSQL state with one monthly cap below what they need together.
 * Uploads meet 5xx answers and lost requests and answers; some processes are SIGKILLed mid-run. Then
 * they run again until nothing is left that the cap allows. What the service itself charged decides.
 */

const suite = useE2eSuite({ proxy: true, before: ensureDist, timeoutMs: 180_000 });

const RUNNERS = 8;
const COMMON = 20;
const OWN = 4;
const UPLOAD_COST = 5;
const CAP = 200;

describe('eight runners, one dataset, one budget, on PostgreSQL', () => {
  it('spend never passes the shared cap, nothing is charged twice, no content is bought twice, through faults and kill -9', async () => {
    const began = performance.now();
    const rng = createPrng(20_261_126);
    const url = await freshDatabase('fleet');
    const ds = suite.svc.dataset({ credits: 100_000 });
    const start = await ds.balance();
    const workspaces: Workspace[] = Array.from({ length: RUNNERS }, (_, i) => {
      const ws = createWorkspace(suite.temp.make(), {
        baseUrl: suite.proxy.url,
        apiKey: ds.apiKey,
        config: {
          state: url,
          sources: [{ name: `r${i}`, path: './docs' }],
          budget: { maxCreditsPerRun: 100_000, maxCreditsPerDay: 100_000, maxCreditsPerMonth: CAP },
          upload: { concurrency: 4, requestsPerSecond: 1000 },
        },
      });
      for (let n = 0; n < COMMON; n++) ws.write(`shared/c${n}.md`, `# common ${n}\n\nthe same in every repository\n`);
      for (let n = 0; n < OWN; n++) ws.write(`own-r${i}/f${n}.md`, `# runner ${i} file ${n}\n`);
      return ws;
    });
    const need = (COMMON + RUNNERS * OWN) * UPLOAD_COST;
    expect(need).toBeGreaterThan(CAP);

    // Faults on every upload: 5xx before the service sees it, a request cut off, an answer lost after the charge.
    const faults = { '5xx': 0, 'request dropped': 0, 'answer dropped': 0 };
    suite.proxy.requests.length = 0;
    suite.proxy.setHooks({
      onRequest: (req) => {
        if (!isUpload(req)) return { kind: 'forward' };
        const roll = rng.next();
        if (roll < 0.1) {
          faults['5xx']++;
          return { kind: 'respond', status: 503, json: { error: { code: 'unavailable', message: 'injected' } } };
        }
        if (roll < 0.18) {
          faults['request dropped']++;
          return { kind: 'drop' };
        }
        return { kind: 'forward' };
      },
      onResponse: (req) => {
        if (isUpload(req) && rng.chance(0.08)) {
          faults['answer dropped']++;
          return 'drop';
        }
        return 'relay';
      },
    });

    const spawnAll = (): KbsyncChild[] =>
      workspaces.map((ws) => spawnKbsync(['sync', '--json', '-c', ws.configPath], ws.root, { KBSYNC_DEBUG: '1' }));
    const first = spawnAll();
    // kill -9 three of them at random moments while they work.
    let kills = 0;
    const victims = [0, 1, 2, 3, 4, 5, 6, 7].sort(() => rng.next() - 0.5).slice(0, 3);
    await Promise.all(
      victims.map(async (v) => {
        await new Promise((resolve) => setTimeout(resolve, rng.int(800, 3000)));
        const child = first[v] as KbsyncChild;
        if (child.child.exitCode === null && child.child.signalCode === null) {
          kills++;
          await killHard(child);
        }
      }),
    );
    const firstExits = await Promise.all(first.map((k) => k.exited));
    // Killed, or ended on its own: done (0), some files failed by the faults (1), work left for later (3); never an internal error.
    for (const e of firstExits) if (e.signal !== 'SIGKILL') expect([0, 1, 3], e.stderr).toContain(e.code);
    suite.proxy.setHooks({});

    // Then they run again, all at once, until a round changes nothing.
    const rounds: ChildExit[][] = [firstExits];
    for (let round = 0; round < 5; round++) {
      const before = await ds.balance();
      const exits = await Promise.all(spawnAll().map((k) => k.exited));
      rounds.push(exits);
      for (const e of exits) expect([0, 3], e.stderr).toContain(e.code);
      if ((await ds.balance()) === before && exits.every((e) => e.code === 0 || e.code === 3)) break;
    }

    const charged = start - (await ds.balance());
    const files = await ds.files();
    const names = new Set(files.map((f) => f.name));
    const contents = new Set(files.map((f) => f.sha256));
    const view = openState(url, { lock: false }) as PgStateStore;
    let stateSpent: number;
    let problems: string[];
    try {
      stateSpent = view.creditsUsed(null).spent.month;
      problems = view.verifyTotals();
      expect(view.runners().length).toBeGreaterThanOrEqual(RUNNERS);
    } finally {
      view.close();
    }

    expect(charged).toBeLessThanOrEqual(CAP);
    // 0 duplicate charges: every credit the service took is one file in the dataset.
    expect(charged).toBe(files.length * UPLOAD_COST);
    expect(names.size).toBe(files.length);
    // 0 content bought twice across runners.
    expect(contents.size).toBe(files.length);
    // The cap was the limit: the dataset holds all the budget could buy (the state's own books agree, or err high).
    expect(charged).toBeGreaterThan(CAP - UPLOAD_COST);
    expect(stateSpent).toBeGreaterThanOrEqual(charged);
    expect(stateSpent).toBeLessThanOrEqual(CAP);
    expect(problems).toEqual([]);
    expect(kills).toBeGreaterThan(0);
    expect(faults['5xx'] + faults['request dropped'] + faults['answer dropped']).toBeGreaterThan(0);
    printFigures('eight runners on one PostgreSQL state', {
      'needed credits': need,
      cap: CAP,
      'charged by the service': charged,
      'state spent': stateSpent,
      files: files.length,
      kills,
      ...faults,
      rounds: rounds.length,
      seconds: ((performance.now() - began) / 1000).toFixed(1),
    });
  }, 150_000);
});
