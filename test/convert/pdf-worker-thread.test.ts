import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { convertPdf } from '../../src/convert/pdf.js';
import { DEFAULT_CONVERT_LIMITS, type ConvertResult } from '../../src/convert/types.js';
import { startWorker } from '../../src/shared/worker-entry.js';

const PDF_MODULE = fileURLToPath(new URL('../../src/convert/pdf.ts', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../fixtures/convert/report-libreoffice.pdf', import.meta.url));

describe('convertPdf in a worker thread', () => {
  it('converts there as in the main thread, with no DOM, no canvas and bounded heaps', async () => {
    const worker = startWorker(
      `const { parentPort, workerData } = process.getBuiltinModule('node:worker_threads');
      const bytes = new Uint8Array(process.getBuiltinModule('node:fs').readFileSync(workerData.file));
      import(workerData.module)
        .then(({ convertPdf }) => convertPdf(bytes, { name: 'report.pdf', limits: workerData.limits }))
        .then((result) => parentPort.postMessage({ result, dom: typeof document, canvas: typeof HTMLCanvasElement }));`,
      {
        workerData: { file: FIXTURE, module: PDF_MODULE, limits: DEFAULT_CONVERT_LIMITS },
        resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 },
      },
    );
    try {
      const [answer] = (await once(worker, 'message')) as [{ result: ConvertResult; dom: string; canvas: string }];
      expect(answer.dom).toBe('undefined');
      expect(answer.canvas).toBe('undefined');
      const here = await convertPdf(new Uint8Array(readFileSync(FIXTURE)), { name: 'report.pdf', limits: DEFAULT_CONVERT_LIMITS });
      expect(answer.result).toEqual(here);
      expect(answer.result).toMatchObject({ ok: true, units: 3 });
    } finally {
      await worker.terminate();
    }
  });
});
