import type { PlanItem, SyncPlan } from '../types.js';
import type { TrackedIndex } from '../tracked-index.js';
import { intelligenceJson, itemJson, summaryOf } from './json-report.js';
import type { UnchangedLines } from './unchanged-lines.js';

/**
 * jsonReportChunks of a plan, byte for byte, with the lines of its unchanged files taken from
 * `lines` (made ahead by a helper thread from `tracked`, the index the plan was made from): runs of
 * such items come as the helper's UTF-8 bytes, and every other item (or one whose line is not
 * there) is made here, one JSON.stringify per item: between runs of lines they come a few at a time
 * (the bench tree's unsupported files sit among its unchanged ones), where a chunk's stringify,
 * split into lines, cost more than the items' own.
 */
export function* jsonPlanParts(plan: SyncPlan, tracked: TrackedIndex, lines: UnchangedLines): Generator<string | Uint8Array> {
  yield `{\n  "summary": ${JSON.stringify(summaryOf(plan.totals))},\n  "items": [`;
  const { items } = plan;
  let first = true;
  let text = '';
  // The run of lines to copy: rows runFrom..runTo-1 of one batch (rows are consecutive, so are their bytes).
  let runBatch: ReturnType<UnchangedLines['batchOf']> = null;
  let runFrom = 0;
  let runTo = 0;
  // Plain functions, not generators: called per item, they must not allocate when there is nothing to flush.
  const textOut = (): string => {
    // The first item has no comma before it.
    const out = first ? text.slice(1) : text;
    text = '';
    first = false;
    return out;
  };
  const runBytes = (): Uint8Array => {
    const { bytes, offsets, start } = runBatch as NonNullable<typeof runBatch>;
    // Each line starts with the separator (",\n    "); the document's first item has no comma.
    const out = bytes.subarray((offsets[runFrom - start] as number) + (first ? 1 : 0), offsets[runTo - start] as number);
    runBatch = null;
    first = false;
    return out;
  };
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as PlanItem;
    const row = lines.rowOf(item, tracked);
    if (row < 0) {
      DBG.miss++;
      if (runBatch !== null) yield runBytes();
      text += `,\n    ${JSON.stringify(itemJson(item, item.credits))}`;
      if (text.length >= TEXT_CHUNK) yield textOut();
      continue;
    }
    DBG.hit++;
    if (text.length > 0) yield textOut();
    if (runBatch !== null && row === runTo && row - runBatch.start < runBatch.offsets.length - 1) {
      runTo++;
      continue;
    }
    if (runBatch !== null) yield runBytes();
    runBatch = lines.batchOf(row);
    runFrom = row;
    runTo = row + 1;
  }
  if (text.length > 0) yield textOut();
  if (runBatch !== null) yield runBytes();
  if (process.env.PJDBG) process.stderr.write(`PJDBG hit ${DBG.hit} miss ${DBG.miss} t ${performance.now().toFixed(0)}\n`);
  const intel = plan.intelligence;
  const tail = intel === undefined ? '' : `,\n  "intelligence": ${JSON.stringify(intelligenceJson(intel))}`;
  yield `${items.length === 0 ? '' : '\n  '}]${tail}\n}\n`;
}

/** Characters of items made here gathered before they are handed on (~64 KB, young-generation garbage). */
const TEXT_CHUNK = 64 * 1024;
const DBG = { hit: 0, miss: 0 };
