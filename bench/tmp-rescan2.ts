import { performance } from 'node:perf_hooks';
import { openState } from '../src/sync/state/index.js';
import { observeSources, scanFolder, WalkAhead } from '../src/sync/sources/index.js';
import { deltaOf } from '../src/sync/planner/index.js';
import { bareWalk } from './scan-tree.js';

const tree = '/tmp/kbsync-bench-100000-full/tree';
const state = openState('/tmp/kbsync-bench-daemon/watch/state/state.db', { lock: false });
const tracked = await state.loadTrackedFilesSoon();
tracked.loadDetails();
const source = { name: 'bench', path: tree, include: ['**/*'], exclude: [], followSymlinks: false } as never;
const res: Record<string, number[]> = { bare: [], scanNoPool: [], scanPool: [], scanAhead: [], obsAhead: [], obsNone: [] };
const t = (k: string, f: () => unknown) => { const s = performance.now(); f(); res[k]!.push(performance.now() - s); };
for (let i = 0; i < 7; i++) {
  t('bare', () => bareWalk(tree));
  t('scanNoPool', () => scanFolder({ name: 'bench', root: tree, include: ['**/*'], exclude: [], followSymlinks: false }, { statPool: false }));
  t('scanPool', () => scanFolder({ name: 'bench', root: tree, include: ['**/*'], exclude: [], followSymlinks: false }));
  t('scanAhead', () => { const a = WalkAhead.start([tree]); scanFolder({ name: 'bench', root: tree, include: ['**/*'], exclude: [], followSymlinks: false }, { ahead: a }); a?.stop(); });
  let s = performance.now();
  const a = WalkAhead.start([tree]);
  let o = await observeSources([source], { stateDir: '/tmp', known: tracked, walkAhead: a });
  deltaOf(o.files, tracked, null);
  res.obsAhead!.push(performance.now() - s);
  s = performance.now();
  o = await observeSources([source], { stateDir: '/tmp', known: tracked, walkAhead: null });
  deltaOf(o.files, tracked, null);
  res.obsNone!.push(performance.now() - s);
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!.toFixed(0);
console.log(Object.entries(res).map(([k, v]) => `${k} ${med(v)}`).join('  '));
