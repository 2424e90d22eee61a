import { it } from 'vitest';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
import { createWriteStream } from 'node:fs';
import { silentLogger } from '../../shared/logger.js';
import { createTestDb, addFile, fileRow } from './test-support.js';
import { createProcessingWorker } from './worker.js';
import { searchChunks } from '../store/chunks.js';
import { join } from 'node:path';

it('bench', async () => {
  const t = createTestDb();
  const path = join(t.dir, 'big.csv');
  const out = createWriteStream(path);
  out.write('id,name,email,city,notes\n');
  let bytes = 0; let i = 0;
  while (bytes < 50 * 1024 * 1024) { const line = `${i},Person ${i},person${i}@example.com,City ${i % 997},"Some free text note number ${i}, with a comma"\n`; bytes += line.length; if (!out.write(line)) await new Promise(r => out.once('drain', r)); i++; }
  await new Promise(r => out.end(r));
  const id = addFile(t, { name: 'big.csv', content: 'x' });
  t.db.prepare('UPDATE files SET stored_path = ? WHERE id = ?').run(path, id);
  global.gc?.();
  let peak = 0; const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 50);
  const rss0 = process.memoryUsage().rss;
  const w = createProcessingWorker({ db: t.db, logger: silentLogger(), onIntelligenceEvent: () => {} });
  let maxLag = 0; let last = performance.now(); const lag = setInterval(() => { const n = performance.now(); maxLag = Math.max(maxLag, n - last - 10); last = n; }, 10);
  const t0 = performance.now();
  w.start(); w.kick(); await w.whenIdle(); await w.stop();
  const ms = performance.now() - t0;
  clearInterval(timer); clearInterval(lag);
  console.log('rows', i, 'MB', (bytes/1048576).toFixed(1), 'ms', ms.toFixed(0), 'MB/s', (bytes/1048576/(ms/1000)).toFixed(1), fileRow(t.db, id), 'rss0', (rss0/1048576).toFixed(0), 'peak', (peak/1048576).toFixed(0), 'maxLagMs', maxLag.toFixed(0));
  const q0 = performance.now();
  const hits = searchChunks(t.db, { datasetId: 1, query: 'person123456@example.com', topK: 5 });
  console.log('query ms', (performance.now()-q0).toFixed(1), hits[0]?.text.slice(0, 200));
  const q1 = performance.now();
  searchChunks(t.db, { datasetId: 1, query: 'free text note', topK: 20 });
  console.log('common-term query ms', (performance.now()-q1).toFixed(1));
  t.db.close(); require('node:fs').copyFileSync(t.path, '/tmp/bench.db'); t.cleanup();
}, 600_000);
