import { copyFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { manyPagePdf } from '../../../bench/pdf-files.js';
import { ensureDist } from '../../helpers/build-dist.js';
import { freePort, logsOf, until, untilDaemonReady, useChildren, type LogLine } from '../../helpers/daemon-children.js';
import { useE2eSuite } from '../../helpers/e2e-suite.js';
import { createWorkspace } from '../../helpers/e2e-workspace.js';
import { spawnKbsync } from '../../helpers/kbsync-child.js';

const suite = useE2eSuite({ before: ensureDist, timeoutMs: 180_000 });
const children = useChildren();
const FIXTURES = fileURLToPath(new URL('../../fixtures/convert/', import.meta.url));

describe('kbsync watch converts documents', () => {
  it('uploads a dropped PDF and PPTX as Markdown, answers /healthz while a long PDF converts, and does not pay again for a touch', async () => {
    const ds = suite.svc.dataset();
    const ws = createWorkspace(suite.temp.make(), {
      baseUrl: suite.svc.url,
      apiKey: ds.apiKey,
      config: { convert: ['pdf', 'pptx'], watch: { debounceMs: 200, probeTimeoutMs: 1000 } },
    });
    ws.write('a.md', '# A\n');
    const port = await freePort();
    const k = spawnKbsync(['watch', '-c', ws.configPath, '--http', `127.0.0.1:${port}`], ws.root);
    children.push(k);
    await untilDaemonReady(k, `${ws.statePath}.watch.json`);
    const uploads = (path: string): LogLine[] =>
      logsOf(k).filter((l) => l.msg === 'file' && l.path === path && l.action === 'upload' && l.outcome === 'done');

    ws.write('long.pdf', manyPagePdf(400));
    copyFileSync(join(FIXTURES, 'report-libreoffice.pdf'), join(ws.docs, 'q3.pdf'));
    copyFileSync(join(FIXTURES, 'deck-pandoc.pptx'), join(ws.docs, 'deck.pptx'));
    // While the cycle converts, the daemon's own thread answers.
    let answeredWhileConverting = 0;
    await until(
      'the three documents uploaded',
      async () => {
        const health = await request(`http://127.0.0.1:${port}/healthz`);
        await health.body.dump();
        if (health.statusCode === 200 && uploads('long.pdf').length === 0) answeredWhileConverting++;
        return ['long.pdf', 'q3.pdf', 'deck.pptx'].every((p) => uploads(p).length === 1);
      },
      90_000,
    );
    expect(answeredWhileConverting).toBeGreaterThan(0);
    const files = await ds.files();
    expect(files.map((f) => f.name).sort()).toEqual(['a.md', 'deck.pptx.md', 'long.pdf.md', 'q3.pdf.md']);

    // A touch: the daemon looks, converts nothing new, pays nothing.
    const cycles = logsOf(k).filter((l) => l.msg === 'sync cycle done').length;
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(ws.docs, 'q3.pdf'), later, later);
    await until('a cycle after the touch', () => logsOf(k).filter((l) => l.msg === 'sync cycle done').length > cycles);
    expect(uploads('q3.pdf')).toHaveLength(1);
    expect((await ws.runJson('plan')).report.summary.creditsPlanned).toBe(0);

    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);
  });
});
