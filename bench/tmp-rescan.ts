import { performance } from 'node:perf_hooks';
import { openState } from '../src/sync/state/index.js';
import { observeSources, WalkAhead } from '../src/sync/sources/index.js';
import { deltaOf } from '../src/sync/planner/index.js';
import { bareWalk } from './scan-tree.js';

const tree = '/tmp/kbsync-bench-100000-full/tree';
const state = openState('/tmp/kbsync-bench-daemon/watch/state/state.db', { lock: false });
const tracked = await state.loadTrackedFilesSoon();
tracked.loadDetails();
const source = { name: 'bench', path: tree, include: ['**/*'], exclude: [], followSymlinks: false } as never;
const mode = process.argv[2] ?? 'ahead';
const res: Record<string, number[]> = { bare: [], obs: [] };
for (let i = 0; i < 9; i++) {
  let t = performance.now();
  bareWalk(tree);
  res.bare!.push(performance.now() - t);
  t = performance.now();
  const ahead = mode === 'ahead' ? WalkAhead.start([tree]) : null;
  const o = await observeSources([source], { stateDir: '/tmp', known: tracked, walkAhead: ahead });
  ahead?.stop();
  const d = deltaOf(o.files, tracked, null);
  res.obs!.push(performance.now() - t);
  if (d.files.length > 10) console.log('changed', d.files.length);
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!.toFixed(0);
console.log(mode, 'bare', med(res.bare!), 'obs', med(res.obs!), JSON.stringify(res.obs!.map((x) => Math.round(x))));
