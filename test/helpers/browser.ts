import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axe from 'axe-core';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium: playwright's own browser downloads cannot run here. */
export const CHROMIUM = '/usr/bin/chromium';

/** Where the browser tests leave their screenshots (gitignored). */
export const BROWSER_ARTIFACTS = join(import.meta.dirname, '../browser/artifacts');

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * A fresh Chromium (its own --user-data-dir, removed at close). No browser is a failure that says how
 * to install one, never a skipped test.
 */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no browser at ${CHROMIUM}: install Debian's Chromium with \`apt-get install -y chromium\` (scripts/ci-deps.sh does it)`,
    );
  const profile = mkdtempSync(join(tmpdir(), 'kbsync-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The axe-core source, evaluated in the page (a script tag would be refused by the page's own CSP). */
const AXE = axe.source;

/** axe-core's violations of the page's current DOM that are serious or critical. */
export async function seriousViolations(page: Page): Promise<{ id: string; impact: string; nodes: string[] }[]> {
  await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(): Promise<{ violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] }> };
      }
    ).axe;
    const r = await axe.run();
    return r.violations.map((v) => ({ id: v.id, impact: v.impact ?? '', nodes: v.nodes.map((n) => JSON.stringify(n.target)) }));
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Saves a full-page screenshot under BROWSER_ARTIFACTS; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(BROWSER_ARTIFACTS, { recursive: true });
  const path = join(BROWSER_ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
