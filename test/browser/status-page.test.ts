import { copyFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist } from '../helpers/build-dist.js';
import { launchChromium, screenshot, seriousViolations } from '../helpers/browser.js';
import { freePort, until, useChildren } from '../helpers/daemon-children.js';
import { createTempDirs, createWorkspace, runKbsync, type Workspace } from '../helpers/e2e-workspace.js';
import { creditsToday, rawRequest, startPageDaemon } from '../helpers/page-daemon.js';
import { apiFor, startHarness, type Harness } from '../service/helpers.js';

/*
 * The status page of `kbsync watch --http`, in Debian's Chromium against a real daemon on a temp tree
 * and the project's own service: what it shows, its live updates, its paid search, its access rules.
 */

const CORRUPT_DOCX = join(import.meta.dirname, '../fixtures/real/docx/corrupt/tables.truncated.docx');
const WEBHOOK_SECRET = `whsec_${Buffer.from('a webhook secret for the page test').toString('base64')}`;

let h: Harness;
let browser: Awaited<ReturnType<typeof launchChromium>>;
const temp = createTempDirs();
beforeAll(async () => {
  await ensureDist();
  h = await startHarness();
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await h?.close();
  temp.cleanup();
});

const children = useChildren();

function workspace(): { ws: Workspace; apiKey: string } {
  const api = apiFor(h, { plan: 'pro', credits: 1000 });
  const ws = createWorkspace(temp.make(), {
    baseUrl: h.service.url,
    apiKey: api.key,
    plan: 'pro',
    config: {
      watch: { debounceMs: 300, webhookSecret: '${KBSYNC_WEBHOOK_SECRET}' },
      upload: { concurrency: 4, requestsPerSecond: 1000, maxReprocessAttempts: 0 },
    },
  });
  ws.write('guide.md', '# Guide\n\nHow the deploys work: on Tuesdays, after the review.\n');
  ws.write('notes/meeting.md', '# Meeting\n\nWe agreed to ship the status page.\n');
  return { ws, apiKey: api.key };
}

/** A page that records its console errors and every answer's headers and body. */
async function openPage(): Promise<{ page: Page; errors: string[]; answers: string[] }> {
  const page = await browser.context.newPage();
  const errors: string[] = [];
  const answers: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('response', (r) => {
    void (async () => {
      const head = JSON.stringify(await r.allHeaders());
      const body = r.url().endsWith('/api/events') ? '' : await r.text().catch(() => '');
      answers.push(head + body);
    })();
  });
  return { page, errors, answers };
}

/** A JavaScript expression evaluated in the page (the tests are compiled without the DOM's types). */
const js = (page: Page, expression: string): Promise<unknown> => page.evaluate(expression);

const text = async (page: Page, selector: string): Promise<string> => (await page.locator(selector).textContent()) ?? '';

describe('kbsync watch --http: the status page in a browser', () => {
  it('shows each source, an upload live, a failed file, explain and a paid search; axe, 1280 and 360 px, dark, keyboard', async () => {
    const { ws, apiKey } = workspace();
    copyFileSync(CORRUPT_DOCX, join(ws.docs, 'report.docx'));
    const port = await freePort();
    const k = await startPageDaemon(ws, `127.0.0.1:${port}`, { KBSYNC_WEBHOOK_SECRET: WEBHOOK_SECRET });
    children.push(k);
    const { page, errors, answers } = await openPage();
    await page.goto(`http://127.0.0.1:${port}/`);

    const row = page.locator('#sources tbody tr', { hasText: 'docs' });
    expect(await row.locator('td').nth(1).textContent()).toBe('3');
    await until('the page live', async () => (await text(page, '#live')).includes('running, live'));

    // An edit shows on the open page, with no reload (the marker set on this document survives).
    await page.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 7));
    ws.write('fresh.md', '# Fresh\n\nA file written while the page is open.\n');
    await until('fresh.md on the page', async () => (await text(page, '#activity')).includes('docs/fresh.md'));
    expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(7);
    await until('4 tracked', async () => (await row.locator('td').nth(1).textContent()) === '4');

    // The corrupt DOCX fails on the service: it is under "needs attention" with the service's reason.
    await until('report.docx needs attention', async () => (await text(page, '#attention')).includes('docs/report.docx'));
    const bad = page.locator('#attention tbody tr', { hasText: 'report.docx' });
    expect(await bad.textContent()).toMatch(/failed.*could not process it: parse_failed/);
    expect(await bad.textContent()).toContain('a retry would fail the same way: fix the file');

    // Explain, by keyboard alone: Tab to the box, type, Enter.
    let tabs = 0;
    while ((await js(page, 'document.activeElement?.id')) !== 'explain-path' && tabs++ < 80) await page.keyboard.press('Tab');
    expect(await js(page, 'document.activeElement?.id')).toBe('explain-path');
    await page.keyboard.type('guide.md');
    await page.keyboard.press('Enter');
    await until('the explanation', async () => (await text(page, '#explain-out')).includes('decision'));
    expect(await text(page, '#explain-out')).toMatch(/decision:\s+skip:unchanged/);
    // The "Explain" button of a failed file gives its explanation.
    await bad.getByRole('button', { name: 'Explain' }).click();
    await until('report.docx explained', async () => (await text(page, '#explain-out')).includes('report.docx'));

    // The retry buttons' script posts with the page's CSRF token: for a file whose copy has not failed the daemon says why not.
    await js(
      page,
      `(() => { const b = document.createElement('button'); b.className = 'retry-this'; b.id = 'retry-probe'; b.textContent = 'Retry';
        b.dataset.source = 'docs'; b.dataset.path = 'guide.md'; document.getElementById('tools').append(b); })()`,
    );
    await page.click('#retry-probe');
    await until('the retry answered', async () =>
      (await text(page, '#action-out')).includes('docs/guide.md: its remote copy has not failed'),
    );
    // The browser logs the refusal's 409; nothing else.
    expect(errors.filter((e) => !e.includes('status of 409'))).toEqual([]);
    errors.length = 0;
    // No target check has run: the page says the service has not reported a balance yet.
    expect(await text(page, '#balance')).toContain('not reported yet');

    // A search: its price is said first; it spends 1 credit, recorded in the state, and the page's day spend rises by 1.
    expect(await text(page, '#query-form')).toContain('1 credit');
    const before = await creditsToday(port);
    const spentBefore = await text(page, '#spend-day');
    await page.fill('#query-text', 'when are the deploys');
    await page.keyboard.press('Enter');
    await until('search results', async () => / results?;/.test(await text(page, '#query-out')));
    expect(await text(page, '#query-out')).toContain('docs/guide.md');
    expect(await creditsToday(port)).toBe(before + 1);
    await until('the day spend on the page', async () => (await text(page, '#spend-day')) !== spentBefore);
    expect(await text(page, '#spend-day')).toMatch(new RegExp(`^${before + 1} of `));
    // `kbsync status --json` beside the daemon says the same.
    const status = await runKbsync(['status', '--json', '-c', ws.configPath], ws.root, { env: { KBSYNC_WEBHOOK_SECRET: WEBHOOK_SECRET } });
    expect((JSON.parse(status.stdout) as { credits: { day: number } }).credits.day).toBe(before + 1);

    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'status-page-1280');
    await page.setViewportSize({ width: 360, height: 800 });
    expect(await js(page, 'document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'status-page-360');
    const light = await js(page, 'getComputedStyle(document.body).backgroundColor');
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await js(page, 'getComputedStyle(document.body).backgroundColor')).not.toBe(light);
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 900 });
    await screenshot(page, 'status-page-1280-dark');

    expect(errors).toEqual([]);
    for (const a of answers) {
      expect(a).not.toContain(apiKey);
      expect(a).not.toContain(WEBHOOK_SECRET);
    }
    await page.close();
  }, 120_000);

  it('refuses a foreign Host and a cross-site POST (no credit spent); the CSP allows only its own script; no secret in any answer', async () => {
    const { ws, apiKey } = workspace();
    const port = await freePort();
    const k = await startPageDaemon(ws, `127.0.0.1:${port}`, { KBSYNC_WEBHOOK_SECRET: WEBHOOK_SECRET });
    children.push(k);
    const host = { host: `127.0.0.1:${port}` };

    const index = await rawRequest(port, '/', { headers: host });
    expect(index.status).toBe(200);
    const csp = String(index.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(index.body).not.toMatch(/<script>|<script(?![^>]*\bsrc=)|\son[a-z]+=/i);

    // GET /api/status is the document of `kbsync status --json` (but the heartbeat's age, read at another instant).
    const env = { env: { KBSYNC_WEBHOOK_SECRET: WEBHOOK_SECRET } };
    const withoutBeat = (doc: { daemon: { heartbeat?: unknown } | null }) => ({ ...doc, daemon: { ...doc.daemon, heartbeat: null } });
    const apiStatus = async () =>
      JSON.parse((await rawRequest(port, '/api/status', { headers: host })).body) as {
        tracked: { byRemoteStatus: Record<string, number> };
      };
    // Read once the remote processing has settled, so that both reads see the same rows.
    await until('both files processed', async () => (await apiStatus()).tracked.byRemoteStatus.processed === 2);
    const api = (await apiStatus()) as unknown as Parameters<typeof withoutBeat>[0];
    const cli = JSON.parse((await runKbsync(['status', '--json', '-c', ws.configPath], ws.root, env)).stdout) as typeof api;
    expect(api.daemon).not.toBeNull();
    expect(withoutBeat(api)).toEqual(withoutBeat(cli));

    // DNS rebinding: a name that resolves to 127.0.0.1 is not this daemon's address.
    for (const path of ['/', '/api/status', '/api/events'])
      expect((await rawRequest(port, path, { headers: { host: `evil.example:${port}` } })).status).toBe(403);
    expect((await rawRequest(port, '/healthz', { headers: { host: `evil.example:${port}` } })).status).toBe(200);

    // A POST without the page's CSRF token, or from another origin, spends nothing.
    const before = await creditsToday(port);
    const csrf = /name="kbsync-csrf" content="([^"]+)"/.exec(index.body)?.[1] as string;
    const query = (headers: Record<string, string>) =>
      rawRequest(port, '/api/query', { method: 'POST', headers: { ...host, ...headers }, body: '{"text":"deploys"}' });
    expect((await query({ 'content-type': 'application/json' })).status).toBe(403);
    expect((await query({ 'content-type': 'application/json', 'x-kbsync-csrf': csrf, origin: 'http://evil.example' })).status).toBe(403);
    expect((await query({ 'content-type': 'text/plain', 'x-kbsync-csrf': csrf })).status).toBe(403);

    // In the browser: another site's form posts to the daemon, and its script tries a fetch.
    const attacker: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><form id="f" method="post" action="http://127.0.0.1:${port}/api/query" enctype="text/plain">
<input name='{"text":"deploys","x":"' value='"}'></form><script>
fetch('http://127.0.0.1:${port}/api/query', { method: 'POST', mode: 'no-cors', credentials: 'include', body: '{"text":"deploys"}' })
  .finally(() => document.getElementById('f').submit());</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    const attackerPort = (attacker.address() as { port: number }).port;
    const page = await browser.context.newPage();
    const posted = page.waitForResponse((r) => r.url() === `http://127.0.0.1:${port}/api/query`);
    await page.goto(`http://localhost:${attackerPort}/`);
    expect((await posted).status()).toBe(403);
    await page.close();
    await new Promise<void>((resolve) => {
      attacker.close(() => resolve());
      attacker.closeAllConnections();
    });
    expect(await creditsToday(port)).toBe(before);

    // The same POST with the page's token from the page's origin is the one that spends.
    expect((await query({ 'content-type': 'application/json', 'x-kbsync-csrf': csrf, origin: `http://127.0.0.1:${port}` })).status).toBe(
      200,
    );
    expect(await creditsToday(port)).toBe(before + 1);

    // No answer holds the API key or the webhook secret.
    const all = [
      index,
      await rawRequest(port, '/api/status', { headers: host }),
      await rawRequest(port, '/api/events', { headers: host, firstChunkOnly: true }),
      await rawRequest(port, '/api/explain?path=guide.md', { headers: host }),
      await rawRequest(port, '/assets/page.js', { headers: host }),
      await rawRequest(port, '/metrics', { headers: host }),
    ];
    for (const r of all) {
      const whole = JSON.stringify(r.headers) + r.body;
      expect(whole).not.toContain(apiKey);
      expect(whole).not.toContain(WEBHOOK_SECRET);
    }
  }, 120_000);

  it('bound off loopback, asks for the token: 401 without it, the page with it; /healthz, /readyz, /metrics stay open', async () => {
    const { ws, apiKey } = workspace();
    const port = await freePort();
    const token = 'page-token-0123456789abcdef';
    const k = await startPageDaemon(ws, `0.0.0.0:${port}`, { KBSYNC_HTTP_TOKEN: token, KBSYNC_WEBHOOK_SECRET: WEBHOOK_SECRET });
    children.push(k);
    for (const path of ['/', '/api/status', '/api/events', '/api/explain?path=guide.md'])
      expect((await rawRequest(port, path)).status, path).toBe(401);
    expect((await rawRequest(port, '/api/query', { method: 'POST', body: '{"text":"x"}' })).status).toBe(401);
    for (const path of ['/healthz', '/readyz', '/metrics']) expect((await rawRequest(port, path)).status, path).toBe(200);
    const bearer = { authorization: `Bearer ${token}` };
    expect((await rawRequest(port, '/api/status', { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    const status = await rawRequest(port, '/api/status', { headers: bearer });
    expect(status.status).toBe(200);
    expect(JSON.parse(status.body)).toMatchObject({ tracked: { files: 2 } });

    // A person signs in with the token on the page; the token never comes back in an answer.
    const { page, errors, answers } = await openPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    expect(await text(page, 'main')).toContain('needs the daemon');
    // The browser logs the 401 of the page asked for without the token; nothing after it.
    errors.length = 0;
    await page.fill('#token', token);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#sources');
    await until('the page live', async () => (await text(page, '#live')).includes('running, live'));
    expect(await text(page, '#sources')).toContain('docs');
    expect(errors).toEqual([]);
    await page.close();
    for (const a of [...answers, status.body]) {
      expect(a).not.toContain(token);
      expect(a).not.toContain(apiKey);
    }
  }, 120_000);

  it('says plainly when the daemon has stopped, and when it runs again after a restart, without a reload', async () => {
    const { ws } = workspace();
    const port = await freePort();
    let k = await startPageDaemon(ws, `127.0.0.1:${port}`, { KBSYNC_WEBHOOK_SECRET: WEBHOOK_SECRET });
    children.push(k);
    const { page, errors } = await openPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    await until('the page live', async () => (await text(page, '#live')).includes('running, live'));
    await page.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 9));
    k.child.kill('SIGTERM');
    expect((await k.exited).code).toBe(0);
    await until('stopped on the page', async () => (await text(page, '#live')).includes('daemon stopped'));
    k = await startPageDaemon(ws, `127.0.0.1:${port}`, { KBSYNC_WEBHOOK_SECRET: WEBHOOK_SECRET });
    children.push(k);
    await until('restarted on the page', async () => (await text(page, '#live')).includes('daemon restarted'));
    expect(await text(page, '#live')).toContain(`pid ${k.child.pid}`);
    expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(9);
    // The page's CSRF token is the restarted daemon's: a search from it still works.
    await page.fill('#query-text', 'ship the status page');
    await page.keyboard.press('Enter');
    await until('search results', async () => / results?;/.test(await text(page, '#query-out')));
    // The browser logs the refused reconnections while the daemon is down; nothing else.
    expect(errors.filter((e) => !e.includes('/api/events') && !e.includes('ERR_CONNECTION_REFUSED'))).toEqual([]);
    await page.close();
  }, 120_000);
});
