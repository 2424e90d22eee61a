import { it } from 'vitest';
import { createTestDb } from './test-support.js';
import { beginChunkReplace, collectChunkGarbage } from '../store/chunks.js';

it('lag', () => {
  const text = (i: number) => Array.from({ length: 10 }, (_, j) => `id: ${i * 10 + j}; name: Person ${i * 10 + j}; email: person${i * 10 + j}@example.com; city: City ${j}; notes: Some free text note`).join('\n');
  const t = createTestDb();
  for (const round of [1, 2]) {
    const r = beginChunkReplace(t.db, { datasetId: 1, sourceId: 1 });
    const durs: number[] = []; let total = 0;
    for (let b = 0; b < 384; b++) { const a = performance.now(); r.add(Array.from({ length: 128 }, (_, k) => text(b * 128 + k))); const d = performance.now() - a; durs.push(d); total += d; }
    const c0 = performance.now(); r.commit(); const c = performance.now() - c0;
    durs.sort((a, b) => b - a);
    console.log('round', round, 'add total', total.toFixed(0), 'top5', durs.slice(0, 5).map(d => d.toFixed(0)).join(','), 'commit', c.toFixed(1));
  }
  for (const gb of [200, 100]) {
    const g: number[] = []; let total = 0; let n = 0;
    do { const a = performance.now(); n = collectChunkGarbage(t.db, gb); const d = performance.now() - a; g.push(d); total += d; } while (n > 0 && g.length < 60);
    g.sort((a, b) => b - a);
    console.log('gc batch', gb, 'calls', g.length, 'total', total.toFixed(0), 'top5', g.slice(0, 5).map(d => d.toFixed(0)).join(','));
  }
  t.cleanup();
}, 600_000);
