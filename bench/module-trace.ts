/**
 * Preload for `node --import <this file> bin/kbsync.js ...`: writes the URL of every module the
 * process loads through the ESM loader (ES modules, and CommonJS packages imported from them, such
 * as undici's entry) to the file named by KBSYNC_BENCH_TRACE_FILE, one per line. The benchmark
 * uses it to check what `kbsync plan` loads; it changes nothing else.
 */
import { register } from 'node:module';

const HOOKS = `
import { appendFileSync } from 'node:fs';
let file;
export function initialize(data) { file = data.file; }
export async function load(url, context, next) {
  if (!url.startsWith('node:')) appendFileSync(file, url + '\\n');
  return next(url, context);
}
`;

const file = process.env.KBSYNC_BENCH_TRACE_FILE;
if (file !== undefined && file !== '') register(`data:text/javascript,${encodeURIComponent(HOOKS)}`, { data: { file } });
